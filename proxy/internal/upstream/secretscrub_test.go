package upstream

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

// The configured secrets of the upstreams in these tests. None has the
// shape of a known kind of key, so only the configured-secret screen can
// catch them.
const (
	headerSecret = "hdr-Secret-4f9a2c7e"
	querySecret  = "qry/Secret+81d3"
	userSecret   = "pw-Secret-77ab"
	envSecret    = "env-Secret-0c5e1b"
)

// secretForms are the forms of a secret that must not appear anywhere.
func leakForms(secrets ...string) []string {
	var out []string
	for _, s := range secrets {
		out = append(out, s, url.QueryEscape(s), base64.StdEncoding.EncodeToString([]byte(s)),
			base64.RawURLEncoding.EncodeToString([]byte(s)))
	}
	return out
}

func assertNoLeak(t *testing.T, where, text string, secrets ...string) {
	t.Helper()
	for _, f := range leakForms(secrets...) {
		if strings.Contains(text, f) {
			t.Errorf("%s carries the secret %q: %s", where, f, text)
		}
	}
}

// TestNoSecretLeavesScrubberForms: the scrubber finds a configured value
// in every form a server echoes it in, leaves short settings alone, and
// keeps the error chain.
func TestNoSecretLeavesScrubberForms(t *testing.T) {
	cfg := Config{
		URL:     "https://bob:" + url.QueryEscape(userSecret) + "@example.test/mcp?api_key=" + url.QueryEscape(querySecret) + "&v=1",
		Headers: map[string]string{"Authorization": "Basic " + base64.StdEncoding.EncodeToString([]byte("bob:"+headerSecret))},
		Env: map[string]string{"DEBUG": "true", "TOKEN": envSecret, "NODE_ENV": "production", "NAME": "parent",
			"DOCS": "/srv/documents/library"},
	}
	s := newScrubber(cfg)
	for _, secret := range []string{userSecret, querySecret, headerSecret, envSecret} {
		for _, form := range leakForms(secret) {
			if got := s.Text("x " + form + " y"); got != "x "+ScrubbedValue+" y" {
				t.Errorf("%q: got %q", form, got)
			}
		}
	}
	if plain := "DEBUG is true, v=1, production parent in /srv/documents/library"; s.Text(plain) != plain {
		t.Errorf("settings were replaced: %q", s.Text(plain))
	}
	base := fmt.Errorf("wrapped: %w", context.Canceled)
	err := s.Err(fmt.Errorf("token %s: %w", envSecret, base))
	if strings.Contains(err.Error(), envSecret) || !errors.Is(err, context.Canceled) {
		t.Errorf("err: %v (chain kept: %v)", err, errors.Is(err, context.Canceled))
	}
	n := mcp.JSONRPCNotification{Notification: mcp.Notification{Method: "notifications/progress",
		Params: mcp.NotificationParams{AdditionalFields: map[string]any{"progress": 1, "message": "using " + envSecret}}}}
	if got := s.progress(n).Params.AdditionalFields["message"]; got != "using "+ScrubbedValue {
		t.Errorf("progress message: %v", got)
	}
	if n.Params.AdditionalFields["message"] != "using "+envSecret {
		t.Error("progress modified the notification it was given")
	}
	var logs bytes.Buffer
	logger := scrubLogger(slog.New(slog.NewTextHandler(&logs, nil)), s).With("preset", envSecret)
	logger.Info("msg "+envSecret, "s", envSecret, "err", errors.New(envSecret), "any", []string{envSecret},
		slog.Group("g", "inner", envSecret))
	assertNoLeak(t, "the log", logs.String(), envSecret)
	if n := strings.Count(logs.String(), "redacted configured secret"); n != 6 {
		t.Errorf("log: %d replacements, want 6: %s", n, logs.String())
	}
}
