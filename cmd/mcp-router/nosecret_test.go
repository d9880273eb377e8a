package main

import (
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

// Secrets planted for the TestNoSecretIn tests: one the profile configures
// (an env value), one known only by its shape (an sk- key the child
// happens to print).
const (
	plantedEnvKey = "envsecret-7f3a9c2e41d8b6"
	plantedShaped = "sk-proj-Q2x9Lm4Tz8Rb6Nw3Kp7Vh1Yc5Jd0Fg2Ha4Se6Ut"
)

// TestNoSecretInDoctor: a server that fails after printing its API key
// (from its env) and a key it holds to stderr shows its last stderr lines
// in doctor, with both redacted, in the report and in the log.
func TestNoSecretInDoctor(t *testing.T) {
	cfg := writeFile(t, t.TempDir(), "p.yaml", fmt.Sprintf(`profiles:
  default:
    upstreams:
      leaky:
        command: sh
        args: ["-c", "echo \"login failed: API_KEY=$API_KEY, fallback %s\" >&2; exit 3"]
        env: {API_KEY: %s}
`, plantedShaped, plantedEnvKey))
	out, logs, err := runCLI(t, nil, "doctor", "--timeout", "2s", "--config", cfg, "--log-level", "debug")
	if err == nil {
		t.Fatal("doctor: exit 0 with a failing server")
	}
	if !strings.Contains(out, "login failed") {
		t.Fatalf("doctor shows no stderr line of the failed server:\n%s", out)
	}
	for _, sink := range []struct{ name, text string }{{"report", out}, {"log", logs}, {"error", err.Error()}} {
		for _, secret := range []string{plantedEnvKey, plantedShaped} {
			if strings.Contains(sink.text, secret) {
				t.Errorf("doctor's %s holds %q:\n%s", sink.name, secret, sink.text)
			}
		}
	}
}

// TestNoSecretInLogs: whatever package logs a secret known by its shape
// (a JWT, an sk- key, a bearer token in a header it quotes), in the message
// or an attribute, the log prints it redacted.
func TestNoSecretInLogs(t *testing.T) {
	jwt := "eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJlLXNpZ25hdHVyZQ"
	var b strings.Builder
	log := newLogger(&b, "debug")
	log.Info("upstream said: invalid key "+plantedShaped, "header", "Authorization: Bearer "+jwt,
		"err", fmt.Errorf("refused %s", plantedShaped), slog.Group("g", "token", jwt))
	got := b.String()
	for _, secret := range []string{plantedShaped, jwt} {
		if strings.Contains(got, secret) {
			t.Errorf("log line holds a secret: %s", got)
		}
	}
	if !strings.Contains(got, "[redacted") {
		t.Errorf("log line %q says nothing was redacted", got)
	}
}
