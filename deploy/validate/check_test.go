package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
)

// manifestsDir is the repository's deploy/k8s.
const manifestsDir = "../k8s"

// realManifests reads deploy/k8s into memory, for a case to change.
func realManifests(t *testing.T) fstest.MapFS {
	t.Helper()
	entries, err := os.ReadDir(manifestsDir)
	if err != nil {
		t.Fatal(err)
	}
	fsys := fstest.MapFS{}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(manifestsDir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		fsys[e.Name()] = &fstest.MapFile{Data: data}
	}
	return fsys
}

func TestRepositoryManifestsPass(t *testing.T) {
	if err := Check(os.DirFS(manifestsDir)); err != nil {
		t.Fatalf("deploy/k8s: %v", err)
	}
}

// Each case breaks the real manifests in one way; the checker must say
// so, naming the file and what is wrong.
func TestBrokenManifestsFail(t *testing.T) {
	tests := []struct {
		name      string
		file      string
		old, new  string // replaced once in file; "" old adds the file
		wantParts []string
	}{
		{"misspelt field", "deployment.yaml", "readinessProbe:", "readinesProbe:",
			[]string{"deployment.yaml", `unknown field "readinesProbe"`}},
		{"readiness on the wrong path", "deployment.yaml", "path: /readyz", "path: /ready",
			[]string{"deployment.yaml", "readinessProbe.httpGet.path", `want "/readyz"`}},
		{"liveness on another port", "deployment.yaml", "path: /healthz\n              port: http", "path: /healthz\n              port: metrics",
			[]string{"livenessProbe.httpGet.port", "metrics is not a port"}},
		{"probe without a Host header", "deployment.yaml", "              httpHeaders:\n                - {name: Host, value: localhost}\n            periodSeconds: 5", "            periodSeconds: 5",
			[]string{"readinessProbe.httpGet.httpHeaders", `Host ""`}},
		{"probe with the Service's name as Host", "deployment.yaml", "{name: Host, value: localhost}\n            initialDelaySeconds", "{name: Host, value: mcp-router}\n            initialDelaySeconds",
			[]string{"livenessProbe.httpGet.httpHeaders", `Host "mcp-router"`}},
		{"service selects no pod", "service.yaml", "    app.kubernetes.io/component: gateway\n  ports", "    app.kubernetes.io/component: web\n  ports",
			[]string{"service.yaml", "spec.selector", "does not select the Deployment's pods"}},
		{"deployment selector misses its template", "deployment.yaml", "  selector:\n    matchLabels:\n      app.kubernetes.io/name: mcp-router", "  selector:\n    matchLabels:\n      app.kubernetes.io/name: mcp-gateway",
			[]string{"deployment.yaml", "spec.selector"}},
		{"service targets no container port", "service.yaml", "targetPort: http", "targetPort: 9090",
			[]string{"service.yaml", "spec.ports[0].targetPort", "9090"}},
		{"budget blocks every drain", "pdb.yaml", "minAvailable: 2", "minAvailable: 3",
			[]string{"pdb.yaml", "spec.minAvailable", "no pod to evict"}},
		{"bad quantity", "deployment.yaml", "memory: 512Mi", "memory: 512Mx",
			[]string{"deployment.yaml", "quantities must match"}},
		{"no memory limit", "deployment.yaml", "            limits: {memory: 512Mi}\n", "",
			[]string{"resources.limits.memory"}},
		{"writable root", "deployment.yaml", "readOnlyRootFilesystem: true", "readOnlyRootFilesystem: false",
			[]string{"readOnlyRootFilesystem: want true"}},
		{"tmp not mounted", "deployment.yaml", "            - {name: tmp, mountPath: /tmp}\n", "",
			[]string{"/tmp must be a writable mount"}},
		{"secret key the Secret lacks", "deployment.yaml", "key: bearer-token", "key: bearer-tokn",
			[]string{"env[1].valueFrom.secretKeyRef.key", `no key "bearer-tokn"`}},
		{"config key the ConfigMap lacks", "deployment.yaml", "{key: profiles.yaml, path: profiles.yaml}", "{key: profile.yaml, path: profiles.yaml}",
			[]string{"items[0].key", `no "profile.yaml"`, "want its profiles.yaml"}},
		{"listens on an undeclared port", "deployment.yaml", `"0.0.0.0:8080"`, `"0.0.0.0:9090"`,
			[]string{"args", "9090 does not listen on a declared container port"}},
		{"bad label value", "deployment.yaml", "      labels:\n        app.kubernetes.io/name: mcp-router", "      labels:\n        app.kubernetes.io/name: mcp router",
			[]string{"spec.template.metadata.labels", "mcp router"}},
		{"single replica", "deployment.yaml", "replicas: 3", "replicas: 1",
			[]string{"spec.replicas", "at least 2"}},
		{"profiles.yaml not YAML", "configmap.yaml", "    default_profile: team", "    default_profile: [team",
			[]string{"configmap.yaml", "data.profiles.yaml"}},
		{"manifest left out", "kustomization.yaml", "  - pdb.yaml\n", "",
			[]string{"pdb.yaml: not listed", "no policy/v1 PodDisruptionBudget"}},
		{"resource missing", "kustomization.yaml", "  - pdb.yaml\n", "  - pdb.yaml\n  - hpa.yaml\n",
			[]string{"hpa.yaml"}},
		{"misspelt kustomization field", "kustomization.yaml", "resources:", "resource:",
			[]string{"kustomization.yaml", `unknown field "resource"`}},
		{"patch of a missing object", "kustomization.yaml", "  - pdb.yaml\n", "  - pdb.yaml\npatches:\n  - patch: |-\n      {apiVersion: apps/v1, kind: Deployment, metadata: {name: gateway}, spec: {replicas: 2}}\n",
			[]string{"kustomize build", "gateway"}},
		{"patch that breaks the probe", "kustomization.yaml", "  - pdb.yaml\n", "  - pdb.yaml\npatches:\n  - target: {kind: Deployment, name: mcp-router}\n    patch: |-\n      - {op: replace, path: /spec/template/spec/containers/0/livenessProbe/httpGet/path, value: /live}\n",
			[]string{"deployment.yaml: spec.template.spec.containers[0].livenessProbe.httpGet.path", `got "/live", want "/healthz"`}},
		{"two documents", "service.yaml", "", "apiVersion: v1\nkind: Service\nmetadata: {name: a}\n---\napiVersion: v1\nkind: Service\nmetadata: {name: b}\n",
			[]string{"service.yaml:4", "second YAML document"}},
		{"unknown kind", "service.yaml", "kind: Service", "kind: Ingress",
			[]string{"service.yaml", "v1/Ingress is not one this checker knows"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fsys := realManifests(t)
			if tt.old == "" {
				fsys[tt.file] = &fstest.MapFile{Data: []byte(tt.new)}
			} else {
				data := string(fsys[tt.file].Data)
				if !strings.Contains(data, tt.old) {
					t.Fatalf("%s does not hold %q: update the case", tt.file, tt.old)
				}
				fsys[tt.file].Data = []byte(strings.Replace(data, tt.old, tt.new, 1))
			}
			err := Check(fsys)
			if err == nil {
				t.Fatal("got no error, want one")
			}
			for _, p := range tt.wantParts {
				if !strings.Contains(err.Error(), p) {
					t.Errorf("got %v\nwant it to mention %q", err, p)
				}
			}
		})
	}
}
