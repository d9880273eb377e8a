package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/mcp-router/mcp-router/internal/oauthtest"
	"github.com/mcp-router/mcp-router/proxy/upstreamauth"
)

// watchedBuffer is stdout for a command that runs while the test reads it.
type watchedBuffer struct {
	mu    sync.Mutex
	b     bytes.Buffer
	lines chan string // each write, for the test to look at
}

func (w *watchedBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	select {
	case w.lines <- string(p):
	default:
	}
	return w.b.Write(p)
}

var authURL = regexp.MustCompile(`https?://\S+/auth\?\S+`)

// runLogin runs `auth login notes` in-process and signs in as alice in
// the browser when it prints the URL.
func runLogin(t *testing.T, p *oauthtest.Provider, cfgPath string) string {
	t.Helper()
	out := &watchedBuffer{lines: make(chan string, 16)}
	e := &env{stdin: strings.NewReader(""), stdout: out, stderr: &bytes.Buffer{}, getenv: func(string) (string, bool) { return "", false }}
	root := newRootCmd(e)
	root.SetArgs([]string{"auth", "login", "notes", "--config", cfgPath, "--log-level", "error"})
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(t.Context()) }() // ends once the redirect came, or with the test's context
	for {
		select {
		case s := <-out.lines:
			if u := authURL.FindString(s); u != "" {
				if _, err := p.Authorize(t.Context(), u, oauthtest.Alice, ""); err != nil {
					t.Fatalf("browser: %v", err)
				}
			}
			continue
		case err := <-done:
			if cerr := e.closeState(); err == nil {
				err = cerr
			}
			if err != nil {
				t.Fatalf("auth login: %v", err)
			}
		}
		break
	}
	out.mu.Lock()
	defer out.mu.Unlock()
	return out.b.String()
}

func TestAuthLoginCallLogout(t *testing.T) {
	p := oauthtest.NewProvider(t)
	r := oauthtest.NewResource(t, p)
	dir := t.TempDir()
	cfg := writeFile(t, dir, "p.yaml", `state_dir: `+filepath.Join(dir, "state")+`
profiles:
  default:
    upstreams:
      notes:
        url: `+r.URL+`
        auth: {client_id: `+oauthtest.GatewayClient+`}
`)
	flags := []string{"--config", cfg, "--log-level", "error"}

	// Before a login the call fails with auth_required, naming the command.
	_, _, err := runCLI(t, nil, append([]string{"call", "notes_whoami"}, flags...)...)
	if err == nil || !strings.Contains(err.Error(), "mcp-router auth login notes") {
		t.Fatalf("call before login: got %v, want an error naming `mcp-router auth login notes`", err)
	}
	out, _, err := runCLI(t, nil, append([]string{"auth", "status"}, flags...)...)
	if err != nil || !strings.Contains(out, "needs login") {
		t.Fatalf("status before login: got %q, %v", out, err)
	}

	out, _, err = runCLI(t, nil, append([]string{"auth", "status", "--for", "token-0123456789ab"}, flags...)...)
	if err != nil || !strings.Contains(out, "mcp-router auth login notes --for token-0123456789ab") {
		t.Fatalf("status of one caller's login: got %q, %v; want its login command", out, err)
	}

	out = runLogin(t, p, cfg)
	if !strings.Contains(out, "notes: logged in until") {
		t.Errorf("login output: %q", out)
	}
	if fi, err := os.Stat(filepath.Join(dir, "state", upstreamauth.KeyFile)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("token key file: %v; want one with mode 0600", err)
	}

	out, _, err = runCLI(t, nil, append([]string{"call", "notes_whoami"}, flags...)...)
	if err != nil || !strings.Contains(out, `"text": "alice"`) {
		t.Fatalf("call after login: got %q, %v; want alice's answer", out, err)
	}
	out, _, err = runCLI(t, nil, append([]string{"auth", "status", "--json"}, flags...)...)
	var st []upstreamauth.Status
	if err != nil || json.Unmarshal([]byte(out), &st) != nil || len(st) != 1 || !st[0].LoggedIn || !st[0].Refreshable {
		t.Fatalf("status --json after login: got %q, %v", out, err)
	}
	for _, tok := range r.Tokens() {
		if strings.Contains(out, tok) {
			t.Fatal("auth status printed a token")
		}
	}

	if out, _, err = runCLI(t, nil, append([]string{"auth", "logout", "notes"}, flags...)...); err != nil || !strings.Contains(out, "logged out") {
		t.Fatalf("logout: got %q, %v", out, err)
	}
	out, _, err = runCLI(t, nil, append([]string{"call", "notes_whoami"}, flags...)...)
	if err == nil || !strings.Contains(err.Error()+out, "mcp-router auth login notes") {
		t.Fatalf("call after logout: got %q, %v; want an error naming `mcp-router auth login notes`", out, err)
	}
	if _, _, err := runCLI(t, nil, append([]string{"auth", "login", "nope"}, flags...)...); err == nil || !strings.Contains(err.Error(), `"nope"`) || !strings.Contains(err.Error(), "notes") {
		t.Errorf("login to an unknown upstream: got %v, want an error naming it and the remote upstreams", err)
	}
	t.Logf("the refused call says: %v", err)
}
