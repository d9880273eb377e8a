package main

// The Kubernetes manifests in deploy/k8s, seen from the gateway: the
// ConfigMap's profiles.yaml loads with the environment the Deployment
// gives, and the probes the Deployment declares get past the Host check
// of a real serve --http. deploy/validate checks the manifests' structure.

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/mcp-router/mcp-router/builtin"
	"github.com/mcp-router/mcp-router/cmd/mcp-router/internal/config"
	"github.com/mcp-router/mcp-router/proxy/frontdoor"
)

const deployDir = "../../deploy/k8s"

// deployment is the part of deploy/k8s this test reads.
type deployment struct {
	namespace string
	service   string
	profiles  string            // the ConfigMap's profiles.yaml
	args      []string          // the container's
	env       map[string]string // the container's, secrets from secret.example.yaml
	probes    map[string]string // path to the Host header it sends
}

func readDeployment(t *testing.T) deployment {
	t.Helper()
	var kust struct{ Namespace string }
	var svc, cm struct {
		Metadata struct{ Name string }
		Data     map[string]string
	}
	var secret struct {
		StringData map[string]string `yaml:"stringData"`
	}
	var dep struct {
		Spec struct {
			Template struct {
				Spec struct{ Containers []container }
			}
		}
	}
	for file, v := range map[string]any{"kustomization.yaml": &kust, "service.yaml": &svc, "configmap.yaml": &cm,
		"secret.example.yaml": &secret, "deployment.yaml": &dep} {
		data, err := os.ReadFile(filepath.Join(deployDir, file))
		if err != nil {
			t.Fatal(err)
		}
		if err := yaml.Unmarshal(data, v); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
	}
	if len(dep.Spec.Template.Spec.Containers) != 1 {
		t.Fatalf("deployment.yaml: got %d containers, want 1", len(dep.Spec.Template.Spec.Containers))
	}
	c := dep.Spec.Template.Spec.Containers[0]
	d := deployment{namespace: kust.Namespace, service: svc.Metadata.Name, profiles: cm.Data["profiles.yaml"],
		args: c.Args, env: map[string]string{}, probes: map[string]string{}}
	for _, e := range c.Env {
		d.env[e.Name] = e.Value
		if ref := e.ValueFrom.SecretKeyRef; ref != nil {
			d.env[e.Name] = secret.StringData[ref.Key]
		}
	}
	for _, p := range []probe{c.ReadinessProbe, c.LivenessProbe} {
		d.probes[p.HTTPGet.Path] = ""
		for _, h := range p.HTTPGet.HTTPHeaders {
			if strings.EqualFold(h.Name, "Host") {
				d.probes[p.HTTPGet.Path] = h.Value
			}
		}
	}
	return d
}

type container struct {
	Args []string
	Env  []struct {
		Name      string
		Value     string
		ValueFrom struct {
			SecretKeyRef *struct{ Key string } `yaml:"secretKeyRef"`
		} `yaml:"valueFrom"`
	}
	ReadinessProbe probe `yaml:"readinessProbe"`
	LivenessProbe  probe `yaml:"livenessProbe"`
}

type probe struct {
	HTTPGet struct {
		Path        string
		HTTPHeaders []struct{ Name, Value string } `yaml:"httpHeaders"`
	} `yaml:"httpGet"`
}

// The ConfigMap's profiles.yaml loads with mcp-router's own loader, its
// variables all set by the Deployment, and serve --http as the Deployment
// runs it would start: tokens set, the Service's names allowed, state in
// PostgreSQL, and only upstreams that suit replicas.
func TestDeployConfigMapLoadsWithTheDeploymentsEnvironment(t *testing.T) {
	d := readDeployment(t)
	file := writeFile(t, t.TempDir(), "profiles.yaml", d.profiles)
	getenv := func(k string) (string, bool) { v, ok := d.env[k]; return v, ok }
	cfg, err := config.Load(config.LoadOptions{Path: file, Getenv: getenv, Builtins: builtin.Names()})
	if err != nil {
		t.Fatalf("the ConfigMap's profiles.yaml: %v", err)
	}
	prof, err := cfg.Profile("")
	if err != nil {
		t.Fatalf("the ConfigMap's profiles.yaml with the Deployment's env: %v", err)
	}
	if err := cfg.CheckHTTP(); err != nil {
		t.Fatalf("the ConfigMap's http section: %v", err)
	}
	i := slices.Index(d.args, "--http")
	if i < 0 || i+1 >= len(d.args) {
		t.Fatalf("deployment.yaml: args %q, want serve --http ADDR", d.args)
	}
	var auth frontdoor.Options
	cfg.HTTP.Auth(&auth)
	if err := frontdoor.CheckListen(d.args[i+1], auth); err != nil {
		t.Errorf("serve %s would refuse to start: %v", strings.Join(d.args, " "), err)
	}
	if got, want := cfg.State.URL, d.env["MCP_ROUTER_STATE_URL"]; got == "" || got != want {
		t.Errorf("state.url: got %q, want the Secret's %q", got, want)
	}
	for _, h := range []string{d.service, d.service + "." + d.namespace + ".svc.cluster.local"} {
		if !slices.Contains(cfg.HTTP.AllowedHosts, h) {
			t.Errorf("http.allowed_hosts: got %q, want it to hold %q, a name the Service is reached by", cfg.HTTP.AllowedHosts, h)
		}
	}
	var remote int
	for _, u := range prof.Upstreams {
		if u.Command != "" {
			t.Errorf("upstream %s: a stdio child (%s) runs once per replica; the replicated profile should list remote and built-in upstreams", u.Name, u.Command)
		}
		if u.URL != "" {
			remote++
		}
	}
	if remote == 0 {
		t.Error("the profile has no remote upstream, the kind that suits replicas")
	}
}

// The probes as the kubelet sends them, to a real serve --http with the
// ConfigMap's profiles.yaml: liveness answers 200 at once, readiness 503
// while the remote upstreams (not reachable here) are not connected; both
// get past the Host check, which the pod's own IP would not. A client
// through the Service's name with the token gets the full report.
func TestDeployProbesPassTheHostCheck(t *testing.T) {
	d := readDeployment(t)
	bin := buildBinary(t)
	dir := t.TempDir()
	file := writeFile(t, dir, "profiles.yaml", d.profiles)
	cmd := exec.Command(bin, "serve", "--http", "127.0.0.1:0", "--config", file)
	cmd.Env = isolatedEnv(dir, "MCP_ROUTER_STATE_DIR="+filepath.Join(dir, "state"))
	for k, v := range d.env {
		switch k {
		case "MCP_ROUTER_STATE_URL", "MCP_ROUTER_CONFIG": // no PostgreSQL here: state.db in dir
		case "MCP_ROUTER_SESSION_KEY": // the example Secret holds a placeholder, which serve refuses
			cmd.Env = append(cmd.Env, k+"="+base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 32)))
		default:
			cmd.Env = append(cmd.Env, k+"="+v)
		}
	}
	base := startServeHTTP(t, cmd)
	get := func(path, host, token string) (int, string) {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, base+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Host = host
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
		return resp.StatusCode, string(body)
	}
	if code, body := get("/healthz", d.probes["/healthz"], ""); code != http.StatusOK || !strings.Contains(body, `"alive"`) {
		t.Errorf("liveness probe (Host %q): got %d %s, want 200 alive", d.probes["/healthz"], code, body)
	}
	if code, body := get("/readyz", d.probes["/readyz"], ""); code != http.StatusServiceUnavailable || !strings.Contains(body, `"not_ready"`) {
		t.Errorf("readiness probe (Host %q): got %d %s, want 503 not_ready (the remote upstreams are not reachable here)", d.probes["/readyz"], code, body)
	}
	if code, _ := get("/healthz", "10.244.1.7:8080", ""); code != http.StatusForbidden {
		t.Errorf("probe with the pod's IP as Host: got %d, want 403 (so the probes must name a loopback Host)", code)
	}
	code, body := get("/readyz", d.service+"."+d.namespace+".svc.cluster.local:8080", d.env["MCP_ROUTER_TOKEN"])
	var rep struct {
		States []struct{ Name string }
	}
	_ = json.Unmarshal([]byte(body), &rep)
	if code != http.StatusServiceUnavailable || len(rep.States) == 0 {
		t.Errorf("/readyz through the Service's name with the token: got %d %s, want 503 with each upstream's state", code, body)
	}
}
