package config

import (
	"strings"
	"testing"
)

// TestNoSecretLeavesFromConfigErrors: an error about a value found wrong
// once its ${VAR} is expanded names the value as written, never the
// variable's value, which may be a key or a password.
func TestNoSecretLeavesFromConfigErrors(t *testing.T) {
	const secret = "sk-live-9b1f3c0d2e"
	vars := map[string]string{
		"BAD_URL":    "ftp://u:" + secret + "@h.example/mcp",
		"NOT_URL":    "::" + secret,
		"BAD_ORIGIN": "https://app.example.com/path?k=" + secret,
	}
	check := func(t *testing.T, what string, err error, written string) {
		t.Helper()
		if err == nil {
			t.Fatalf("%s: no error", what)
		}
		if strings.Contains(err.Error(), secret) {
			t.Errorf("%s: the error shows the expanded secret: %v", what, err)
		}
		if !strings.Contains(err.Error(), written) {
			t.Errorf("%s: the error does not name %s as written: %v", what, written, err)
		}
	}
	for _, v := range []string{"BAD_URL", "NOT_URL"} {
		cfg, err := load(t, "profiles:\n  p:\n    upstreams:\n      r: {url: \"${"+v+"}\", headers: {X-Key: k}}\n", vars)
		if err == nil {
			var p Profile
			if p, err = cfg.Profile("p"); err == nil {
				err = disabledErr(p)
			}
		}
		check(t, "url "+v, err, "${"+v+"}")
	}
	cfg, err := load(t, "http:\n  allowed_origins: [\"${BAD_ORIGIN}\"]\nprofiles:\n  p: {}\n", vars)
	if err == nil {
		err = cfg.CheckHTTP()
	}
	check(t, "allowed_origins", err, "${BAD_ORIGIN}")
	_, err = load(t, "profiles:\n  p: {}\n", map[string]string{"MCP_ROUTER_OLLAMA_URL": "http://h:" + secret + "@x/${OOPS}"})
	check(t, "MCP_ROUTER_OLLAMA_URL", err, "${OOPS}")
}
