package upstream

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/mcp-router/mcp-router/proxy/internal/secrettest"
)

// TestNoSecretLeavesScrubberForms: the scrubber finds a configured value
// in every form a server echoes it in, leaves short settings alone, and
// keeps the error chain.
func TestNoSecretLeavesScrubberForms(t *testing.T) {
	cfg := Config{
		URL:     "https://bob:" + url.QueryEscape(secrettest.User) + "@example.test/mcp?api_key=" + url.QueryEscape(secrettest.Query) + "&v=1",
		Headers: map[string]string{"Authorization": "Basic " + base64.StdEncoding.EncodeToString([]byte("bob:"+secrettest.Header))},
		Env: map[string]string{"DEBUG": "true", "TOKEN": secrettest.Env, "NODE_ENV": "production", "NAME": "parent",
			"DOCS": "/srv/documents/library"},
	}
	s := newScrubber(cfg)
	for _, secret := range []string{secrettest.User, secrettest.Query, secrettest.Header, secrettest.Env} {
		for _, form := range secrettest.Forms(secret) {
			if got := s.Text("x " + form + " y"); got != "x "+ScrubbedValue+" y" {
				t.Errorf("%q: got %q", form, got)
			}
		}
	}
	if plain := "DEBUG is true, v=1, production parent in /srv/documents/library"; s.Text(plain) != plain {
		t.Errorf("settings were replaced: %q", s.Text(plain))
	}
	base := fmt.Errorf("wrapped: %w", context.Canceled)
	err := s.Err(fmt.Errorf("token %s: %w", secrettest.Env, base))
	if strings.Contains(err.Error(), secrettest.Env) || !errors.Is(err, context.Canceled) {
		t.Errorf("err: %v (chain kept: %v)", err, errors.Is(err, context.Canceled))
	}
	n := mcp.JSONRPCNotification{Notification: mcp.Notification{Method: "notifications/progress",
		Params: mcp.NotificationParams{AdditionalFields: map[string]any{"progress": 1, "message": "using " + secrettest.Env}}}}
	if got := s.progress(n).Params.AdditionalFields["message"]; got != "using "+ScrubbedValue {
		t.Errorf("progress message: %v", got)
	}
	if n.Params.AdditionalFields["message"] != "using "+secrettest.Env {
		t.Error("progress modified the notification it was given")
	}
	var logs bytes.Buffer
	logger := scrubLogger(slog.New(slog.NewTextHandler(&logs, nil)), s).With("preset", secrettest.Env)
	logger.Info("msg "+secrettest.Env, "s", secrettest.Env, "err", errors.New(secrettest.Env), "any", []string{secrettest.Env},
		slog.Group("g", "inner", secrettest.Env))
	secrettest.AssertNoLeak(t, "the log", logs.String(), secrettest.Env)
	if n := strings.Count(logs.String(), "redacted configured secret"); n != 6 {
		t.Errorf("log: %d replacements, want 6: %s", n, logs.String())
	}
}

// TestNoSecretScrubbedURLUserBesideAPassword: a URL's user name beside a
// password is a name, not a secret (every "postgres" in a database
// server's tool descriptions stayed readable); the password is replaced,
// and so is a user name that stands alone, a token passed as the user.
func TestNoSecretScrubbedURLUserBesideAPassword(t *testing.T) {
	s := newScrubber(Config{Env: map[string]string{
		"DATABASE_URL": "postgres://postgres:" + url.QueryEscape(secrettest.User) + "@db.test/app",
		"REPO_URL":     "https://" + secrettest.Env + "@git.test/repo",
	}})
	text := "query postgres with " + secrettest.User + ", clone with " + secrettest.Env
	if got, want := s.Text(text), "query postgres with "+ScrubbedValue+", clone with "+ScrubbedValue; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestNoSecretInListedSchemas: a tool's schema is scrubbed as listed in
// either era, raw (2025-11-25, listed as sent) or typed (mcp-go's decoding
// on 2026-07-28), and stays a valid schema.
func TestNoSecretInListedSchemas(t *testing.T) {
	s := newScrubber(Config{Env: map[string]string{"TOKEN": secrettest.Env}})
	typed := mcp.NewTool("q", mcp.WithString("dsn", mcp.Description("defaults to "+secrettest.Env)))
	raw := mcp.NewToolWithRawSchema("r", "", json.RawMessage(`{"type":"object","properties":{"dsn":{"default":"`+secrettest.Env+`"}}}`))
	clean := mcp.NewTool("c", mcp.WithString("x"))
	tools := []mcp.Tool{typed, raw, clean}
	s.tools(tools)
	for _, tool := range tools[:2] {
		b, err := json.Marshal(tool)
		if err != nil {
			t.Fatalf("%s: %v", tool.Name, err)
		}
		secrettest.AssertNoLeak(t, tool.Name, string(b), secrettest.Env)
		if !strings.Contains(string(b), ScrubbedValue) || !json.Valid(tool.RawInputSchema) {
			t.Errorf("%s: got %s, want the secret replaced in a raw schema", tool.Name, b)
		}
	}
	if tools[2].RawInputSchema != nil || tools[2].InputSchema.Type != "object" {
		t.Errorf("a schema without a secret was changed: %+v", tools[2])
	}
}

// twice is mcp-go's wrapping of a failed POST, which people were shown.
const twice = "failed to send request: failed to send request"

// An HTTP upstream whose server has gone: the error a call gives (as the
// hub shows it) says each cause once, in the cause's own words.
func TestCallToAClosedHTTPUpstreamSaysEachCauseOnce(t *testing.T) {
	s := server.NewMCPServer("gone", "1", server.WithToolCapabilities(false))
	s.AddTool(mcp.NewTool("echo"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("ok"), nil
	})
	ts := httptest.NewServer(server.NewStreamableHTTPServer(s))
	u, _ := runSolo(t, Config{Name: "gone", Transport: TransportStreamableHTTP, URL: ts.URL + "/mcp"})
	if st := u.Status(); st.State != StateConnected {
		t.Fatalf("the server did not connect: %s", st.Err)
	}
	ts.Config.Close() // closes the listener and every connection, the open GET stream too
	ts.Close()
	_, err := callErr(t, u, "echo", nil, nil)
	if err == nil {
		t.Fatal("the call succeeded, want it failed")
	}
	shown := u.ForModel(WithoutURL(err)).Error()
	if strings.Contains(shown, twice) || !strings.Contains(shown, "failed to send request: Post") {
		t.Errorf("got %q, want each cause once", shown)
	}
}

// An HTTP upstream nothing listens for: the reason status and doctor
// give says each cause once and keeps the cause's words.
func TestUnreachableHTTPUpstreamStatusSaysEachCauseOnce(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	u, _ := runSolo(t, Config{Name: "nobody", Transport: TransportStreamableHTTP, URL: "http://" + addr + "/mcp"})
	got := u.Status().Err
	if strings.Contains(got, twice) || !strings.Contains(got, "connection refused") {
		t.Errorf("got %q, want each cause once, with the cause", got)
	}
}
