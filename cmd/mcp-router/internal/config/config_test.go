package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"

	mcprouter "github.com/mcp-router/mcp-router"
	"github.com/mcp-router/mcp-router/proxy"
	"github.com/mcp-router/mcp-router/proxy/frontdoor"
	"github.com/mcp-router/mcp-router/proxy/integrity"
	"github.com/mcp-router/mcp-router/routing"
)

var builtins = []string{"calculator", "docs", "web"}

func env(vars map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := vars[k]
		return v, ok
	}
}

// load writes yaml to a profiles.yaml and loads it with vars as the environment.
// load loads content strictly: an upstream entry left out for its own
// errors (see broken.go) is an error here too, so that the tests of what
// those errors say read them from one place.
func load(t *testing.T, content string, vars map[string]string) (*Config, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "profiles.yaml")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(LoadOptions{Path: path, Getenv: env(vars), Builtins: builtins})
	if err != nil {
		return cfg, err
	}
	var errs []error
	for _, name := range cfg.names {
		for _, b := range cfg.broken[name] {
			errs = append(errs, b.err)
		}
	}
	return cfg, errors.Join(errs...)
}

// An upstream entry with errors of its own (a misspelt key, no command,
// url or builtin) is disabled alone: the file loads, the profile serves
// its other upstreams and lists the broken one as disabled with its error
// (file, line, key) and a reason the model may read.
func TestUpstreamEntryErrorDisablesOnlyItsUpstream(t *testing.T) {
	path := filepath.Join(t.TempDir(), "profiles.yaml")
	content := "profiles:\n  p:\n    upstreams:\n      calc: {builtin: calculator}\n      fs:\n        comand: npx\n        description: my files\n" +
		"      empty: {description: nothing to run}\n      off: {comand: x, enabled: false}\n"
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(LoadOptions{Path: path, Getenv: env(nil), Builtins: builtins})
	if err != nil {
		t.Fatalf("Load: %v, want the file to load with fs and empty disabled", err)
	}
	p, err := cfg.Profile("p")
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Upstreams) != 1 || p.Upstreams[0].Name != "calc" {
		t.Errorf("upstreams %+v, want calc alone", p.Upstreams)
	}
	want := map[string]string{
		"fs":    path + ":6: profiles.p.upstreams.fs.comand: unknown key",
		"empty": path + ":8: profiles.p.upstreams.empty: needs exactly one of command",
	}
	if len(p.Disabled) != len(want) {
		t.Fatalf("disabled %+v, want fs and empty (off is switched off)", p.Disabled)
	}
	for _, d := range p.Disabled {
		if d.Err == nil || !strings.Contains(d.Err.Error(), want[d.Name]) || d.Reason == "" || strings.Contains(d.Reason, path) {
			t.Errorf("disabled %s: err %v, reason %q; want %q and a reason without the path", d.Name, d.Err, d.Reason, want[d.Name])
		}
		if d.Name == "fs" && (d.Description != "my files" || d.Prefix != "fs_") {
			t.Errorf("disabled fs: description %q, prefix %q; want what its entry says", d.Description, d.Prefix)
		}
	}
}

func loadProfile(t *testing.T, content string, vars map[string]string) Profile {
	t.Helper()
	cfg, err := load(t, content, vars)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	p, err := cfg.Profile("")
	if err != nil {
		t.Fatalf("Profile: %v", err)
	}
	return p
}

func TestLoadResolvesUpstreams(t *testing.T) {
	p := loadProfile(t, `
default_profile: main
profiles:
  main:
    upstreams:
      calc: {builtin: calculator}
      fs:
        command: npx
        args: ["-y", "server-fs", "${HOME}/docs"]
        env: {GitHub_Token: "${TOKEN}", PLAIN: "x"}
        cwd: /tmp
        timeout: 30s
        max_timeout: 5m
        tools: {deny: [write_file]}
      remote:
        url: "https://example.com/mcp?k=${KEY:-none}"
        headers: {Authorization: "Bearer ${API_KEY}", X-Custom-Header: "$${literal}"}
        transport: sse
        prefix: ""
        domain: search
        protocol: modern
      off: {builtin: web, enabled: false}
    core_tools: [calc_add]
`, map[string]string{"HOME": "/home/u", "TOKEN": "t0k", "API_KEY": "k3y"})
	want := []proxy.UpstreamConfig{
		{Name: "calc", Transport: proxy.TransportBuiltin, Builtin: "calculator", Prefix: "calc_", DefaultPrefix: true},
		{Name: "fs", Transport: proxy.TransportStdio, Command: "npx", Args: []string{"-y", "server-fs", "/home/u/docs"},
			Env: map[string]string{"GitHub_Token": "t0k", "PLAIN": "x"}, Cwd: "/tmp", Prefix: "fs_", DefaultPrefix: true,
			Timeout: 30 * time.Second, MaxTimeout: 5 * time.Minute, Deny: []string{"write_file"}},
		{Name: "remote", Transport: proxy.TransportSSE, URL: "https://example.com/mcp?k=none",
			Headers: map[string]string{"Authorization": "Bearer k3y", "X-Custom-Header": "${literal}"},
			Domain:  "search", Protocol: "modern"},
	}
	if diff := cmp.Diff(want, p.Upstreams); diff != "" {
		t.Errorf("upstreams (-want +got):\n%s", diff)
	}
	if p.Name != "main" || !cmp.Equal(p.CoreTools, []string{"calc_add"}) {
		t.Errorf("got profile %q core %v, want main [calc_add]", p.Name, p.CoreTools)
	}
	if o := routing.NewRouter(p.Routing.RouterOptions).Options(); o.TopK != 5 || o.Threshold != 0.35 || p.Routing.Mode != "routed" {
		t.Errorf("routing defaults: got %+v, router %+v", p.Routing, o)
	}
}

func TestLoadErrorsNameFileLineAndKey(t *testing.T) {
	tests := []struct {
		name, yaml string
		vars       map[string]string
		want       []string // each must appear in the error
	}{
		{"unknown key with suggestion", "profiles:\n  p:\n    upstreams:\n      fs: {comand: npx}\n",
			nil, []string{"profiles.yaml:4:", "profiles.p.upstreams.fs.comand", `did you mean "command"`}},
		{"unknown top-level key", "profile:\n  p: {}\n", nil, []string{":1:", "profile: unknown key", `"profiles"`}},
		{"two kinds", "profiles:\n  p:\n    upstreams:\n      x: {command: a, url: 'http://h/'}\n",
			nil, []string{":4:", "profiles.p.upstreams.x", "exactly one of command"}},
		{"bad url", "profiles:\n  p:\n    upstreams:\n      x:\n        url: ftp://h/\n",
			nil, []string{":5:", "profiles.p.upstreams.x.url", "http:// or https://"}},
		{"url without host", "profiles:\n  p:\n    upstreams:\n      x: {url: 'http:///mcp'}\n",
			nil, []string{"upstreams.x.url", "no host"}},
		{"unknown builtin", "profiles:\n  p:\n    upstreams:\n      x: {builtin: calc}\n",
			nil, []string{"upstreams.x.builtin", `unknown built-in server "calc"`, "calculator, docs, web"}},
		{"bad duration", "profiles:\n  p:\n    upstreams:\n      x: {builtin: web, timeout: soon}\n",
			nil, []string{"upstreams.x.timeout", "positive Go duration"}},
		{"max_timeout below timeout", "profiles:\n  p:\n    upstreams:\n      x:\n        builtin: web\n        timeout: 2m\n        max_timeout: 90s\n",
			nil, []string{":7:", "upstreams.x.max_timeout", "1m30s is shorter than timeout (2m0s)"}},
		{"max_timeout below the default timeout", "profiles:\n  p:\n    upstreams:\n      x: {builtin: web, max_timeout: 30s}\n",
			nil, []string{":4:", "upstreams.x.max_timeout", "shorter than the default timeout (1m0s)"}},
		{"wrong type", "profiles:\n  p:\n    upstreams:\n      x: {builtin: web, enabled: maybe}\n",
			nil, []string{"upstreams.x.enabled", "boolean"}},
		{"args not a list", "profiles:\n  p:\n    upstreams:\n      x: {command: a, args: b}\n",
			nil, []string{"upstreams.x.args", "want a list"}},
		{"headers on a command", "profiles:\n  p:\n    upstreams:\n      x: {command: a, headers: {A: b}}\n",
			nil, []string{"upstreams.x.headers", "does not apply"}},
		{"bad transport", "profiles:\n  p:\n    upstreams:\n      x: {url: 'http://h/', transport: websocket}\n",
			nil, []string{"upstreams.x.transport", "websocket"}},
		{"bad protocol", "profiles:\n  p:\n    upstreams:\n      x: {builtin: web, protocol: '2024-01-01'}\n",
			nil, []string{"upstreams.x.protocol", "2025-11-25"}},
		{"bad prefix", "profiles:\n  p:\n    upstreams:\n      x: {builtin: web, prefix: 'a b'}\n",
			nil, []string{"upstreams.x.prefix"}},
		{"bad name", "profiles:\n  p:\n    upstreams:\n      'my server': {builtin: web}\n",
			nil, []string{"upstreams.my server", "upstream names"}},
		{"threshold out of range", "profiles:\n  p:\n    routing: {threshold: 1.5}\n",
			nil, []string{"profiles.p.routing.threshold", "outside [0, 1]"}},
		{"unknown fuse key", "profiles:\n  p:\n    routing:\n      fuse: {max_tool: 3}\n",
			nil, []string{"profiles.p.routing.fuse.max_tool", "unknown key"}},
		{"bad mode", "profiles:\n  p:\n    routing: {mode: some}\n", nil, []string{"routing.mode", "routed or all"}},
		{"missing default profile", "default_profile: nope\nprofiles:\n  p: {}\n",
			nil, []string{"default_profile", `no profile "nope"`}},
		{"no profiles", "log: {level: info}\n", nil, []string{"no profiles"}},
		{"wildcard origin", "http: {allowed_origins: ['*']}\nprofiles:\n  p: {}\n", nil, []string{"http.allowed_origins", "no wildcards"}},
		{"host with a scheme", "http: {allowed_hosts: ['https://gw.example.com']}\nprofiles:\n  p: {}\n", nil, []string{"http.allowed_hosts[0]", "no scheme"}},
		{"wildcard host", "http: {allowed_hosts: [ok.example.com, '*.example.com']}\nprofiles:\n  p: {}\n", nil, []string{"http.allowed_hosts[1]", "wildcards"}},
		{"bad log level", "log: {level: loud}\nprofiles:\n  p: {}\n", nil, []string{"log.level", "loud"}},
		{"duplicate key", "profiles:\n  p:\n    upstreams:\n      x: {builtin: web}\n      x: {builtin: docs}\n",
			nil, []string{"upstreams.x: given twice"}},
		{"yaml syntax", "profiles: [\n", nil, []string{"profiles.yaml", "yaml"}},
		{"several at once", "profiles:\n  p:\n    upstreams:\n      a: {comand: x}\n      b: {builtin: web, timeout: 0}\n",
			nil, []string{"upstreams.a.comand", "upstreams.b.timeout"}},
		{"several semantic at once", "profiles:\n  p:\n    upstreams:\n      a: {builtin: nope}\n      b: {url: 'gopher://x'}\n",
			nil, []string{"upstreams.a.builtin", "upstreams.b.url"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := load(t, tt.yaml, tt.vars)
			if err == nil {
				t.Fatal("got no error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("got error %q, want it to contain %q", err, w)
				}
			}
		})
	}
}

// A variable that is not set disables the upstream that uses it, and only
// it: the profile keeps the others, and the error names the line, the key
// and the variable.
func TestProfileMissingVariableDisablesOnlyItsUpstream(t *testing.T) {
	cfg, err := load(t, "profiles:\n  p:\n    upstreams:\n      gh:\n        command: srv\n        env: {TOKEN: '${GH_TOKEN}'}\n        description: GitHub issues\n      calc: {builtin: calculator}\n  other:\n    upstreams:\n      c: {builtin: calculator}\n", nil)
	if err != nil {
		t.Fatalf("Load: %v (a variable only matters for the profile that runs)", err)
	}
	if p, err := cfg.Profile("other"); err != nil || len(p.Disabled) != 0 {
		t.Errorf("Profile(other): %v, %v disabled, want no error and none", err, p.Disabled)
	}
	p, err := cfg.Profile("p")
	if err != nil {
		t.Fatalf("Profile(p): %v, want the profile without gh", err)
	}
	if len(p.Upstreams) != 1 || p.Upstreams[0].Name != "calc" {
		t.Errorf("upstreams %v, want calc alone", p.Upstreams)
	}
	if len(p.Disabled) != 1 || p.Disabled[0].Name != "gh" || p.Disabled[0].Description != "GitHub issues" {
		t.Fatalf("disabled %+v, want gh with its description", p.Disabled)
	}
	wantAll(t, disabledErr(p), "profiles.yaml:6:", "profiles.p.upstreams.gh.env.TOKEN", "GH_TOKEN is not set")
	if got, want := p.Disabled[0].Reason, "environment variable GH_TOKEN is not set"; got != want {
		t.Errorf("reason %q, want %q (no path for the model)", got, want)
	}
}

// disabledErr joins the errors of the upstreams left out; nil when none is.
func disabledErr(p Profile) error {
	errs := make([]error, len(p.Disabled))
	for i, d := range p.Disabled {
		errs[i] = d.Err
	}
	return errors.Join(errs...)
}

func TestProfileSelection(t *testing.T) {
	cfg, err := load(t, "profiles:\n  a: {}\n  b: {}\n", nil)
	if err != nil {
		t.Fatal(err)
	}
	if p, err := cfg.Profile("b"); err != nil || p.Name != "b" {
		t.Errorf("Profile(b) = %q, %v", p.Name, err)
	}
	if _, err := cfg.Profile("zzz"); err == nil || !strings.Contains(err.Error(), "profiles: a, b") {
		t.Errorf("Profile(zzz) error %v, want the list of profiles", err)
	}
	if _, err := cfg.Profile(""); err == nil {
		t.Error("Profile(\"\") with two profiles and no default: got no error")
	}
	one, _ := load(t, "profiles:\n  only: {}\n", nil)
	if p, err := one.Profile(""); err != nil || p.Name != "only" {
		t.Errorf("the only profile: got %q, %v", p.Name, err)
	}
}

func TestSettingsAndEnvironmentOverrides(t *testing.T) {
	cfg, err := load(t, "log: {level: warn}\nollama: {embed_model: nomic}\nstate_dir: ${ST}/st\nprofiles:\n  p: {}\n",
		map[string]string{"ST": "/tmp", "MCP_ROUTER_LOG_LEVEL": "debug", "MCP_ROUTER_OLLAMA_URL": "http://127.0.0.1:9", "DEBUG_WIRE_LOG": "true"})
	if err != nil {
		t.Fatal(err)
	}
	got := []any{cfg.Log.Level, cfg.Log.Wire, cfg.Ollama.URL, cfg.Ollama.EmbedModel, cfg.StateDir}
	want := []any{"debug", true, "http://127.0.0.1:9", "nomic", "/tmp/st"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("settings (-want +got):\n%s", diff)
	}
}

func TestSearchOrderAndDefault(t *testing.T) {
	dir := t.TempDir()
	cfg, err := Load(LoadOptions{SearchDirs: []string{dir}, Default: mcprouter.DefaultProfiles, Getenv: env(nil), Builtins: builtins})
	if err != nil {
		t.Fatalf("built-in default: %v", err)
	}
	p, err := cfg.Profile("")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, u := range p.Upstreams {
		names = append(names, u.Name+"="+u.Builtin)
	}
	if cfg.File != DefaultName || !cmp.Equal(names, []string{"calculator=calculator", "web=web", "docs=docs"}) {
		t.Errorf("got %s %v, want the three built-ins from the default", cfg.File, names)
	}
	os.WriteFile(filepath.Join(dir, "profiles.yaml"), []byte("profiles:\n  mine: {}\n"), 0o600)
	cfg, err = Load(LoadOptions{SearchDirs: []string{dir}, Default: mcprouter.DefaultProfiles, Getenv: env(nil), Builtins: builtins})
	if err != nil || cfg.File != filepath.Join(dir, "profiles.yaml") {
		t.Errorf("got %v %v, want the file in the search dir", cfg, err)
	}
	if _, err := Load(LoadOptions{Path: filepath.Join(dir, "missing.yaml")}); err == nil {
		t.Error("a missing --config file: got no error")
	}
}

func TestExpand(t *testing.T) {
	vars := env(map[string]string{"A": "1", "EMPTY": ""})
	tests := []struct{ in, want, err string }{
		{"plain", "plain", ""},
		{"${A}", "1", ""},
		{"x${A}y${A}", "x1y1", ""},
		{"${B:-fb}", "fb", ""},
		{"${EMPTY:-fb}", "fb", ""},
		{"${EMPTY}", "", ""},
		{"$${A}", "${A}", ""},
		{"cost $5", "cost $5", ""},
		{"${B}", "", "B is not set"},
		{"${A", "", "unclosed"},
		{"${1x}", "", "not a variable name"},
	}
	for _, tt := range tests {
		got, err := Expand(tt.in, vars)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("Expand(%q) error %v, want %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("Expand(%q) = %q, %v, want %q", tt.in, got, err, tt.want)
		}
	}
}

func FuzzLoad(f *testing.F) {
	f.Add(string(mcprouter.DefaultProfiles))
	f.Add("profiles:\n  p:\n    upstreams:\n      x: {command: a, env: {K: '${V:-d}'}}\n    routing: {fuse: {max_tools: 2}}\n")
	f.Add("profiles: {p: {upstreams: {x: &a {builtin: web}, y: *a}}}")
	f.Fuzz(func(t *testing.T, content string) {
		var n yaml.Node
		if yaml.Unmarshal([]byte(content), &n) != nil {
			return
		}
		cfg, err := parse("fuzz.yaml", []byte(content), LoadOptions{Getenv: env(nil), Builtins: builtins})
		if err != nil {
			return
		}
		for _, name := range cfg.names {
			_, _ = cfg.Profile(name)
		}
	})
}

func FuzzExpand(f *testing.F) {
	for _, s := range []string{"${A}", "$${A}", "${A:-b}", "${", "$", "a$b${c}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out, err := Expand(s, env(map[string]string{"A": "x"}))
		if err == nil && !strings.Contains(s, "$") && out != s {
			t.Errorf("Expand(%q) = %q, want it unchanged", s, out)
		}
	})
}

// SEC-12: trust_annotations and read_only_tools reach the upstream config;
// a read-only tool that is never exposed is a warning, an empty name an
// error with its line.
func TestLoadAnnotationTrust(t *testing.T) {
	cfg, err := load(t, `
profiles:
  p:
    upstreams:
      fs:
        command: srv
        trust_annotations: true
      gh:
        url: https://example.com/mcp
        read_only_tools: [list_issues, get_issue, delete_repo]
        tools: {deny: [delete_repo]}
`, nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := cfg.Profile("")
	if err != nil {
		t.Fatal(err)
	}
	if u := p.Upstreams[0]; !u.TrustAnnotations || u.ReadOnlyTools != nil {
		t.Errorf("fs: trust %v, read-only %v; want true, none", u.TrustAnnotations, u.ReadOnlyTools)
	}
	if u := p.Upstreams[1]; u.TrustAnnotations || !cmp.Equal(u.ReadOnlyTools, []string{"list_issues", "get_issue", "delete_repo"}) {
		t.Errorf("gh: trust %v, read-only %v", u.TrustAnnotations, u.ReadOnlyTools)
	}
	if want := "profiles.yaml:10: profiles.p.upstreams.gh.read_only_tools: \"delete_repo\" is denied"; !strings.Contains(strings.Join(cfg.Warnings, "\n"), want) {
		t.Errorf("warnings %q, want one containing %q", cfg.Warnings, want)
	}
	_, err = load(t, "profiles:\n  p:\n    upstreams:\n      x:\n        builtin: web\n        read_only_tools: ['']\n", nil)
	if err == nil || !strings.Contains(err.Error(), "profiles.yaml:6: profiles.p.upstreams.x.read_only_tools: an empty tool name") {
		t.Errorf("empty name: got %v", err)
	}
}

// FI-19 and SEC-15: http.disconnect_grace (unset is zero, the proxy's
// 30s; 0 cancels at once, negative to the proxy) and the per-session
// limits (default none) reach the server options; bad values name the
// file, the line and the key.
func TestLoadDisconnectGraceAndLimits(t *testing.T) {
	def, err := load(t, "profiles:\n  p: {}\n", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := []any{def.HTTP.DisconnectGrace, def.Limits.RateLimit}; !cmp.Equal(got, []any{time.Duration(0), proxy.RateLimit{}}) {
		t.Errorf("defaults: got %v, want unset (proxy.DefaultDisconnectGrace) and no limit", got)
	}
	set, err := load(t, "http: {disconnect_grace: 0}\nlimits: {calls_per_second: 2.5, burst: 10}\nprofiles:\n  p: {}\n", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := []any{set.HTTP.DisconnectGrace, set.Limits.RateLimit}; !cmp.Equal(got, []any{time.Duration(-1), proxy.RateLimit{CallsPerSecond: 2.5, Burst: 10}}) {
		t.Errorf("set: got %v, want a negative grace (cancel at once) and 2.5/s burst 10", got)
	}
	if g, _ := load(t, "http: {disconnect_grace: 2m}\nprofiles:\n  p: {}\n", nil); g == nil || g.HTTP.DisconnectGrace != 2*time.Minute {
		t.Errorf("disconnect_grace 2m: got %v", g)
	}
	bad := []struct{ yaml, want string }{
		{"http: {disconnect_grace: -1s}\n", "profiles.yaml:1: http.disconnect_grace: \"-1s\" is not a Go duration"},
		{"http:\n  disconnect_grace: soon\n", "profiles.yaml:2: http.disconnect_grace"},
		{"limits: {calls_per_second: fast}\n", "profiles.yaml:1: limits.calls_per_second: \"fast\" is not a number"},
		{"limits: {calls_per_second: -1}\n", "limits.calls_per_second"},
		{"limits: {calls_per_second: 1, burst: 0}\n", "profiles.yaml:1: limits.burst: \"0\" is not a whole number of calls, 1 or more"},
		{"limits:\n  burst: 3\n", "profiles.yaml:2: limits.burst: needs limits.calls_per_second"},
		{"limits: {rate: 3}\n", "limits.rate: unknown key"},
	}
	for _, b := range bad {
		_, err := load(t, b.yaml+"profiles:\n  p: {}\n", nil)
		if err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("%q: got %v, want an error containing %q", b.yaml, err, b.want)
		}
	}
}

// SEC-11: integrity.results is the profile's result policy, an upstream's
// results overrides it, and unset leaves the proxy's default (redact).
func TestLoadResultPolicy(t *testing.T) {
	p := loadProfile(t, `
profiles:
  p:
    integrity: {results: block}
    upstreams:
      web: {builtin: web}
      vault: {builtin: docs, results: "off"}
`, nil)
	if p.Integrity.Results != "block" || p.Upstreams[0].Results != integrity.ResultsBlock || p.Upstreams[1].Results != integrity.ResultsOff {
		t.Errorf("got profile %q, web %q, vault %q; want block, block, off", p.Integrity.Results, p.Upstreams[0].Results, p.Upstreams[1].Results)
	}
	if p := loadProfile(t, "profiles:\n  p:\n    upstreams:\n      web: {builtin: web}\n", nil); p.Upstreams[0].Results != "" {
		t.Errorf("unset: got %q, want empty (the proxy's default)", p.Upstreams[0].Results)
	}
	for yaml, want := range map[string]string{
		"profiles:\n  p:\n    integrity:\n      pins: true\n      results: strict\n":                     `profiles.yaml:5: profiles.p.integrity.results: "strict" is not off, warn, redact or block`,
		"profiles:\n  p:\n    upstreams:\n      x:\n        builtin: web\n        results: quarantine\n": `profiles.yaml:6: profiles.p.upstreams.x.results: "quarantine" is not off, warn, redact or block`,
		"profiles:\n  p:\n    integrity:\n      poisoning: Quarantine\n":                                 `profiles.yaml:4: profiles.p.integrity.poisoning: "Quarantine" is not warn or quarantine`,
		"profiles:\n  p:\n    integrity:\n      poisoning: block\n":                                      `profiles.yaml:4: profiles.p.integrity.poisoning: "block" is not warn or quarantine`,
	} {
		if _, err := load(t, yaml, nil); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("got %v, want %s", err, want)
		}
	}
}

// BI-07: validate_arguments is off unless set; a profile's value is the
// default of its upstreams and an upstream's own key overrides it.
func TestLoadValidateArguments(t *testing.T) {
	p := loadProfile(t, `
profiles:
  p:
    validate_arguments: true
    upstreams:
      web: {builtin: web}
      docs: {builtin: docs, validate_arguments: false}
`, nil)
	if !p.Upstreams[0].ValidateArguments || p.Upstreams[1].ValidateArguments {
		t.Errorf("got web %v, docs %v; want true (the profile's), false (its own)", p.Upstreams[0].ValidateArguments, p.Upstreams[1].ValidateArguments)
	}
	p = loadProfile(t, "profiles:\n  p:\n    upstreams:\n      web: {builtin: web}\n      calc: {builtin: calculator, validate_arguments: true}\n", nil)
	if p.Upstreams[0].ValidateArguments || !p.Upstreams[1].ValidateArguments {
		t.Errorf("got web %v, calc %v; want false (the default), true", p.Upstreams[0].ValidateArguments, p.Upstreams[1].ValidateArguments)
	}
	for yaml, want := range map[string]string{
		"profiles:\n  p:\n    validate_arguments: sometimes\n":                                               `profiles.yaml:3: profiles.p.validate_arguments: "sometimes" is not a boolean`,
		"profiles:\n  p:\n    upstreams:\n      x:\n        builtin: web\n        validate_arguments: [a]\n": `profiles.yaml:6: profiles.p.upstreams.x.validate_arguments: want a single value`,
		"profiles:\n  p:\n    upstreams:\n      x: {builtin: web, validate_argument: true}\n":                `profiles.p.upstreams.x.validate_argument: unknown key (did you mean "validate_arguments"?)`,
	} {
		if _, err := load(t, yaml, nil); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("got %v, want %s", err, want)
		}
	}
}

// The bounds on each HTTP client and on each upstream's notifications:
// unset, the proxy's defaults (zero here); set, they reach the proxy's
// options; a bad value names the file, the line and the key.
func TestLoadBoundDownstreamHTTPAndNotificationRate(t *testing.T) {
	def, err := load(t, "profiles:\n  p: {}\n", nil)
	if err != nil {
		t.Fatal(err)
	}
	if def.HTTP.Bounds != (HTTPBounds{}) || def.Limits.Notifications != (proxy.NotificationLimit{}) {
		t.Errorf("defaults: got %+v and %+v, want zero (the proxy's defaults)", def.HTTP.Bounds, def.Limits.Notifications)
	}
	set, err := load(t, `http:
  header_timeout: 5s
  idle_timeout: 1m
  body_timeout: 20s
  max_sessions_per_client: 8
  max_streams_per_session: 4
  max_body_memory: 16MiB
limits: {notifications_per_second: 20, notification_burst: 40}
profiles:
  p: {}
`, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := HTTPBounds{Server: frontdoor.HTTPServerOptions{HeaderTimeout: 5 * time.Second, IdleTimeout: time.Minute}, BodyTimeout: 20 * time.Second,
		MaxSessionsPerClient: 8, MaxStreamsPerSession: 4, MaxBodyMemory: 16 << 20}
	if set.HTTP.Bounds != want {
		t.Errorf("http bounds: got %+v, want %+v", set.HTTP.Bounds, want)
	}
	var g frontdoor.Options
	set.HTTP.Bounds.Guard(&g)
	if g.BodyTimeout != 20*time.Second || g.MaxBodyMemory != 16<<20 || g.MaxSessionsPerClient != 8 || g.MaxStreamsPerSession != 4 {
		t.Errorf("guard options: got %+v", g)
	}
	if got := set.HTTP.Bounds.Server; got != (frontdoor.HTTPServerOptions{HeaderTimeout: 5 * time.Second, IdleTimeout: time.Minute}) {
		t.Errorf("server options: got %+v", got)
	}
	if got := set.Limits.Notifications; got != (proxy.NotificationLimit{PerSecond: 20, Burst: 40}) {
		t.Errorf("notification limit: got %+v", got)
	}
	if b, _ := load(t, "http: {max_body_memory: 1048576}\nprofiles:\n  p: {}\n", nil); b == nil || b.HTTP.Bounds.MaxBodyMemory != 1<<20 {
		t.Errorf("max_body_memory in bytes: got %+v", b)
	}
	bad := []struct{ yaml, want string }{
		{"http: {idle_timeout: 0s}\n", "profiles.yaml:1: http.idle_timeout: \"0s\" is not a positive Go duration"},
		{"http:\n  body_timeout: slow\n", "profiles.yaml:2: http.body_timeout"},
		{"http: {header_timeout: -1s}\n", "http.header_timeout"},
		{"http: {max_sessions_per_client: 0}\n", "http.max_sessions_per_client: \"0\" is not a whole number, 1 or more"},
		{"http: {max_streams_per_session: many}\n", "http.max_streams_per_session"},
		{"http: {max_body_memory: 1000}\n", "http.max_body_memory: \"1000\" is not a size of at least 1KiB"},
		{"http: {max_body_memory: 64MB}\n", "http.max_body_memory"},
		{"limits: {notifications_per_second: 0}\n", "limits.notifications_per_second: \"0\" is not a number more than zero"},
		{"limits: {notification_burst: 0}\n", "limits.notification_burst"},
	}
	for _, b := range bad {
		_, err := load(t, b.yaml+"profiles:\n  p: {}\n", nil)
		if err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("%q: got %v, want an error containing %q", b.yaml, err, b.want)
		}
	}
}

// planner.sensitive_topics unset is nil (the planner's default list);
// set to [] it is empty, not nil, and turns the check off.
func TestLoadSensitiveTopicsUnsetOrEmptied(t *testing.T) {
	up := "    upstreams:\n      web: {builtin: web}\n"
	if p := loadProfile(t, "profiles:\n  p:\n"+up, nil); p.Planner.SensitiveTopics != nil {
		t.Errorf("unset: got %q, want nil", p.Planner.SensitiveTopics)
	}
	p := loadProfile(t, "profiles:\n  p:\n    planner: {sensitive_topics: []}\n"+up, nil)
	if p.Planner.SensitiveTopics == nil || len(p.Planner.SensitiveTopics) != 0 {
		t.Errorf("[]: got %#v, want an empty, non-nil list", p.Planner.SensitiveTopics)
	}
	p = loadProfile(t, "profiles:\n  p:\n    planner: {sensitive_topics: [refund]}\n"+up, nil)
	if len(p.Planner.SensitiveTopics) != 1 || p.Planner.SensitiveTopics[0] != "refund" {
		t.Errorf("[refund]: got %q", p.Planner.SensitiveTopics)
	}
}

func TestStateURLExpandsItsPasswordAndChecksTheURL(t *testing.T) {
	cfg, err := load(t, "state: {url: \"postgres://mcp:${PGPASSWORD}@db.internal:5432/mcp\"}\nprofiles:\n  p: {}\n",
		map[string]string{"PGPASSWORD": "hunter2"})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.State.URL != "postgres://mcp:hunter2@db.internal:5432/mcp" {
		t.Errorf("state.url: got %q, want the password expanded", cfg.State.URL)
	}
	if got := RedactURL(cfg.State.URL); got != "postgres://mcp:xxxxx@db.internal:5432/mcp" {
		t.Errorf("RedactURL: got %q", got)
	}
	if cfg, err := load(t, "profiles:\n  p: {}\n", nil); err != nil || cfg.State.URL != "" {
		t.Errorf("no state section: got %q, %v; want state.db (no URL)", cfg.State.URL, err)
	}
	cfg, err = load(t, "profiles:\n  p: {}\n", map[string]string{"MCP_ROUTER_STATE_URL": "postgres://h/db"})
	if err != nil || cfg.State.URL != "postgres://h/db" {
		t.Errorf("MCP_ROUTER_STATE_URL: got %q, %v", cfg.State.URL, err)
	}
}

func TestBadStateURLIsAnErrorWithoutThePassword(t *testing.T) {
	for name, tc := range map[string]struct{ url, want string }{
		"scheme":      {"mysql://u:${PW}@h/db", "the scheme must be postgres://"},
		"no host":     {"postgres://u:${PW}@/db", "no host"},
		"no database": {"postgres://u:${PW}@h", "no database"},
		"not a url":   {"postgres://u:${PW}@h:port/db", "not a URL"},
		"unset":       {"postgres://u:${NOPE}@h/db", "NOPE is not set"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := load(t, "state:\n  url: \""+tc.url+"\"\nprofiles:\n  p: {}\n", map[string]string{"PW": "hunter2"})
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "profiles.yaml:2: state.url") {
				t.Fatalf("got %v, want %q at profiles.yaml:2: state.url", err, tc.want)
			}
			if strings.Contains(err.Error(), "hunter2") {
				t.Errorf("the error shows the password: %v", err)
			}
		})
	}
}
