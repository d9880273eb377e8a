package config

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"
)

// A bearer token written as ${VAR} is the variable's value, never the
// literal placeholder, and every key that can hold a secret expands.
func TestExpandSecretsInEveryKey(t *testing.T) {
	vars := map[string]string{"ROUTER_TOKEN": "s3cret", "OLLAMA": "http://10.0.0.2:11434", "ORIGIN": "https://app.example.com",
		"BIN": "/opt/bin/srv", "ARG": "--key=k", "ENVV": "e", "DIR": "/srv", "HOST": "h.example.com", "HDR": "hv"}
	cfg, err := load(t, `
http:
  bearer_tokens: ["${ROUTER_TOKEN}", "literal-$${x}"]
  allowed_origins: ["${ORIGIN}"]
ollama: {url: "${OLLAMA}", embed_model: "${EMB:-nomic}"}
profiles:
  p:
    upstreams:
      s: {command: "${BIN}", args: ["${ARG}"], env: {K: "${ENVV}"}, cwd: "${DIR}"}
      r: {url: "https://${HOST}/mcp", headers: {X-Key: "${HDR}"}}
      b: {builtin: docs, args: ["--root", "${DIR}/docs"]}
`, vars)
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.CheckHTTP(); err != nil {
		t.Fatalf("CheckHTTP: %v", err)
	}
	got := []any{cfg.HTTP.BearerTokens, cfg.HTTP.AllowedOrigins, cfg.Ollama.URL, cfg.Ollama.EmbedModel}
	want := []any{[]string{"s3cret", "literal-${x}"}, []string{"https://app.example.com"}, "http://10.0.0.2:11434", "nomic"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("settings (-want +got):\n%s", diff)
	}
	p, err := cfg.Profile("p")
	if err != nil {
		t.Fatal(err)
	}
	s, r, b := p.Upstreams[0], p.Upstreams[1], p.Upstreams[2]
	got = []any{s.Command, s.Args, s.Env["K"], s.Cwd, r.URL, r.Headers["X-Key"], b.Args}
	want = []any{"/opt/bin/srv", []string{"--key=k"}, "e", "/srv", "https://h.example.com/mcp", "hv", []string{"--root", "/srv/docs"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("upstream strings (-want +got):\n%s", diff)
	}
}

// The edges: a missing token variable stops serve --http (CheckHTTP) but
// not the commands that do not serve HTTP; an empty token is refused; a
// "${" left after expansion, or written where nothing expands, is refused
// with the file, line and key.
func TestExpandRefusesWhatWouldBeTakenLiterally(t *testing.T) {
	t.Run("missing token variable", func(t *testing.T) {
		cfg, err := load(t, "http:\n  bearer_tokens:\n    - ${ROUTER_TOKEN}\nprofiles:\n  p: {}\n", nil)
		if err != nil {
			t.Fatalf("Load: %v (only serve --http needs the token)", err)
		}
		err = cfg.CheckHTTP()
		wantAll(t, err, "profiles.yaml:3:", "http.bearer_tokens[0]", "ROUTER_TOKEN is not set")
		if cfg.HTTP.BearerTokens != nil {
			t.Errorf("tokens %q after a failed expansion, want none", cfg.HTTP.BearerTokens)
		}
	})
	t.Run("empty token", func(t *testing.T) {
		cfg, err := load(t, "http: {bearer_tokens: ['${ROUTER_TOKEN:-}']}\nprofiles:\n  p: {}\n", map[string]string{"ROUTER_TOKEN": ""})
		if err != nil {
			t.Fatal(err)
		}
		wantAll(t, cfg.CheckHTTP(), "profiles.yaml:1:", "http.bearer_tokens[0]", "empty")
	})
	tests := []struct {
		name, yaml string
		vars       map[string]string
		want       []string
	}{
		{"value holds a placeholder", "ollama: {url: '${OLLAMA}'}\nprofiles:\n  p: {}\n", map[string]string{"OLLAMA": "${OLLAMA_HOST}"},
			[]string{"profiles.yaml:1:", "ollama.url", "OLLAMA holds \"${OLLAMA_HOST}\"", "expanded once"}},
		{"nested fallback", "profiles:\n  p:\n    upstreams:\n      x:\n        command: a\n        env: {T: '${A:-${B}}'}\n", nil,
			[]string{"profiles.yaml:6:", "upstreams.x.env.T", "nested"}},
		{"not expanded here", "profiles:\n  p:\n    upstreams:\n      x:\n        builtin: web\n        domain: '${DOMAIN}'\n", map[string]string{"DOMAIN": "d"},
			[]string{"profiles.yaml:6:", "profiles.p.upstreams.x.domain", "not expanded in this key", "headers"}},
		{"not expanded through an alias", "profiles:\n  p:\n    upstreams:\n      x:\n        command: a\n        env: {T: &t '${T}'}\n        domain: *t\n", map[string]string{"T": "d"},
			[]string{"profiles.p.upstreams.x.domain", "not expanded in this key"}},
		{"not expanded in a list", "profiles:\n  p:\n    core_tools: [a, '${T}']\n", nil,
			[]string{"profiles.yaml:3:", "profiles.p.core_tools[1]"}},
		{"missing ollama variable", "ollama:\n  url: ${NOPE}\nprofiles:\n  p: {}\n", nil,
			[]string{"profiles.yaml:2:", "ollama.url", "NOPE is not set"}},
		{"override holds a placeholder", "profiles:\n  p: {}\n", map[string]string{"MCP_ROUTER_OLLAMA_URL": "${OLLAMA_HOST}"},
			[]string{"MCP_ROUTER_OLLAMA_URL", "ollama.url", "used as it is"}},
		{"override log level", "profiles:\n  p: {}\n", map[string]string{"MCP_ROUTER_LOG_LEVEL": "verbose"},
			[]string{"MCP_ROUTER_LOG_LEVEL", `"verbose" is not one of debug, info, warn, error`}},
		{"log level names the line", "log:\n  level: loud\nprofiles:\n  p: {}\n", nil,
			[]string{"profiles.yaml:2: log.level", `"loud"`, "debug, info, warn, error"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := load(t, tt.yaml, tt.vars)
			if err == nil {
				var p Profile
				if p, err = cfg.Profile("p"); err == nil {
					err = disabledErr(p)
				}
			}
			wantAll(t, err, tt.want...)
		})
	}
}

// A secret in a variable's value never reaches the error message; only the
// placeholder does.
func TestExpandErrorHidesTheValue(t *testing.T) {
	_, err := Expand("${T}", env(map[string]string{"T": "hunter2-${X}-tail"}))
	wantAll(t, err, "T holds", "${X}")
	if err != nil && (strings.Contains(err.Error(), "hunter2") || strings.Contains(err.Error(), "tail")) {
		t.Errorf("error %q shows the value", err)
	}
}

func TestExpandedKeysAreDecodedKeys(t *testing.T) {
	// Each pattern must name keys the file may hold, or the list documents
	// keys that do not exist.
	for _, k := range expandedKeys {
		parts := strings.Split(k, ".")
		if parts[0] == "profiles" {
			continue // covered by TestExpandSecretsInEveryKey
		}
		if _, err := load(t, buildYAML(parts)+"profiles:\n  p: {}\n", map[string]string{"V": "http://x.example"}); err != nil && strings.Contains(err.Error(), "unknown key") {
			t.Errorf("%s: %v", k, err)
		}
	}
}

// buildYAML writes a nested mapping ending in ${V} along path ("*" is a
// list item).
func buildYAML(path []string) string {
	var b strings.Builder
	for i, p := range path {
		if p == "*" {
			b.WriteString(" ['${V}']\n")
			return b.String()
		}
		b.WriteString(strings.Repeat("  ", i) + p + ":")
		if i < len(path)-1 && path[i+1] != "*" {
			b.WriteString("\n")
		}
	}
	b.WriteString(" '${V}'\n")
	return b.String()
}

// Aliases of aliases of aliases are refused before they cost a walk of
// billions of values (the decoder refuses them too; this check must not
// depend on running after it).
func TestLoadRefusesAliasBombs(t *testing.T) {
	var b strings.Builder
	b.WriteString("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i < 9; i++ {
		fmt.Fprintf(&b, "a%d: &a%d [*a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d]\n", i, i, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1)
	}
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(b.String()), &n); err != nil {
		t.Fatal(err)
	}
	wantAll(t, checkUnexpanded("bomb.yaml", n.Content[0]), "bomb.yaml", "aliases")
}

func wantAll(t *testing.T, err error, want ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want one containing %q", want)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("got error %q, want it to contain %q", err, w)
		}
	}
}
