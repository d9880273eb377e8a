package main

import (
	"errors"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-router/mcp-router/internal/oauthtest"
	"github.com/mcp-router/mcp-router/proxy/upstreamauth"
)

// identityConfig is the config of a gateway that is a resource server of
// p (callers' JWTs from oauthtest.JWTCallerClient), with one remote
// upstream, notes (r), that exchanges each caller's token at p (RFC 8693)
// and otherwise uses the gateway's login. It returns the config's path.
func identityConfig(t *testing.T, p *oauthtest.Provider, r *oauthtest.Resource) string {
	t.Helper()
	dir := t.TempDir()
	return writeFile(t, dir, "p.yaml", `state_dir: `+filepath.Join(dir, "state")+`
http:
  oidc:
    issuer: `+p.Issuer+`
    resource: `+oidcResource+`
    audience: `+oauthtest.JWTCallerClient+`
    default_profile: default
profiles:
  default:
    upstreams:
      notes:
        url: `+r.URL+`
        auth:
          client_id: `+oauthtest.GatewayClient+`
          token_exchange:
            token_endpoint: `+p.TokenEndpoint()+`
            client_id: `+oauthtest.ExchangeClient+`
            client_secret: `+oauthtest.ExchangeSecret+`
            scope: openid
`)
}

// serveIdentity runs the built binary over HTTP with cfg, logging at
// debug level into stderr, and returns its base URL once it serves.
func serveIdentity(t *testing.T, cfg string, stderr *lockedBuffer) string {
	t.Helper()
	dir := filepath.Dir(cfg)
	cmd := exec.Command(buildBinary(t), "serve", "--http", "127.0.0.1:0", "--config", cfg, "--log-level", "debug")
	cmd.Env = isolatedEnv(dir)
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	addr := regexp.MustCompile(`url=(http://\S+)/mcp`)
	deadline := time.Now().Add(30 * time.Second)
	for {
		if m := addr.FindStringSubmatch(stderr.String()); m != nil {
			return m[1]
		}
		if time.Now().After(deadline) {
			t.Fatalf("the gateway did not report its address; stderr:\n%s", stderr.String())
		}
		select {
		case <-t.Context().Done():
			t.Fatal(t.Context().Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Identity crosses the gateway in both directions, through the built
// binary with a real MCP client: each caller's JWT from the provider lets
// it in at the front door, and the gateway exchanges that same token at
// the provider for one to the upstream, which sees that caller: not the
// other caller, not the gateway's login (alice's). A call with no caller
// token (the CLI's; over HTTP the front door lets none in) uses the
// gateway's login, and fails auth_required before there is one. A caller
// whose exchange is refused fails auth_required, never served with the
// gateway's login. Neither the callers' tokens nor the exchanged ones
// reach the gateway's log, at debug level.
func TestCallerIdentityReachesTheUpstream(t *testing.T) {
	p := oauthtest.NewProvider(t)
	r := oauthtest.NewResource(t, p)
	cfg := identityConfig(t, p, r)
	cliWhoami := func() (string, error) {
		out, _, err := runCLI(t, nil, "call", "notes_whoami", "--config", cfg, "--log-level", "error")
		return out, err
	}

	// Before the gateway's login a call without a caller token is refused,
	// naming the login.
	if out, err := cliWhoami(); err == nil || !strings.Contains(err.Error()+out, "mcp-router auth login notes") {
		t.Fatalf("a call without a caller token before the login: got %q, %v; want auth_required naming `mcp-router auth login notes`", out, err)
	}
	// The gateway's login (alice's) is made before it serves: it connects
	// to the upstream (initialize, listings) with it.
	runLogin(t, p, cfg)
	if out, err := cliWhoami(); err != nil || !strings.Contains(out, `"text": "`+oauthtest.Alice.ID+`"`) {
		t.Fatalf("a call without a caller token: got %q, %v; want alice (the gateway's login)", out, err)
	}

	var stderr lockedBuffer
	base := serveIdentity(t, cfg, &stderr)
	awaitReady(t, base+"/readyz")
	callers := map[string]string{ // subject: JWT
		oauthtest.Bob.ID:   p.UserJWT(t, oauthtest.Bob),
		oauthtest.Carol.ID: p.UserJWT(t, oauthtest.Carol),
	}
	sessions := map[string]*sdk.ClientSession{}
	for subject, token := range callers {
		sessions[subject] = connectAs(t, base+"/mcp", token)
	}
	whoami := func(s *sdk.ClientSession) (string, bool) {
		res, err := s.CallTool(t.Context(), &sdk.CallToolParams{Name: "call_tool",
			Arguments: map[string]any{"name": "notes_whoami", "arguments": map[string]any{}}})
		bad, text := refused(res, err)
		return text, bad
	}
	for range 2 { // the second time from the exchanged token kept for the caller
		for subject, s := range sessions {
			text, bad := whoami(s)
			if bad {
				t.Fatalf("%s's call: refused: %s", subject, text)
			}
			if !slices.ContainsFunc([]string{oauthtest.Alice.ID, oauthtest.Bob.ID, oauthtest.Carol.ID},
				func(who string) bool { return (who == subject) != strings.Contains(text, who) }) {
				continue
			}
			t.Errorf("%s's call: the upstream says %q, want %s and no one else", subject, text, subject)
		}
	}

	// A caller whose exchange the provider refuses (dan may not have his
	// tokens exchanged) is let in but refused upstream: never served with
	// the gateway's login.
	dan := p.UserJWT(t, oauthtest.Dan)
	if text, bad := whoami(connectAs(t, base+"/mcp", dan)); !bad || !strings.Contains(text, "auth_required") || strings.Contains(text, oauthtest.Alice.ID) {
		t.Errorf("dan's call: got %q (refused %v), want auth_required and not alice's answer", text, bad)
	}
	callers[oauthtest.Dan.ID] = dan
	// A forged token (bob's, its signature changed) is refused at the door.
	forged := callers[oauthtest.Bob.ID]
	forged = forged[:len(forged)-8] + strings.Repeat("A", 8)
	if forged == callers[oauthtest.Bob.ID] {
		forged = forged[:len(forged)-8] + strings.Repeat("B", 8)
	}
	if code := postInitialize(t, base+"/mcp", forged); code != http.StatusUnauthorized {
		t.Errorf("a forged token: got HTTP %d, want 401", code)
	}
	callers["forged"] = forged

	// The upstream saw exchanged tokens, never a caller's own.
	seen := r.Tokens()
	for subject, token := range callers {
		if slices.Contains(seen, token) {
			t.Errorf("the upstream got %s's own token, not an exchanged one", subject)
		}
	}
	log := stderr.String()
	if !strings.Contains(log, " DBG ") || !strings.Contains(log, "token exchange failed") {
		t.Fatalf("no debug lines or no refused exchange in the gateway's log, the check below would be weak:\n%s", log)
	}
	for subject, token := range callers {
		for i, part := range strings.Split(token, ".") {
			// The header (part 0) is the same in every token of the provider.
			if i > 0 && len(part) >= 16 && strings.Contains(log, part) {
				t.Errorf("the gateway's log holds part %d of %s's token", i, subject)
			}
		}
	}
	for _, tok := range seen {
		if strings.Contains(log, tok) {
			t.Error("the gateway's log holds a token it sent upstream")
		}
	}
}

// postInitialize posts an initialize to endpoint with token and returns
// the HTTP status.
func postInitialize(t *testing.T, endpoint, token string) int {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, endpoint, strings.NewReader(
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// A gateway started before the first login (no token key yet: the login
// makes it) finds that login once it is made: it connects to the
// upstream with it, and serves callers with their exchanged tokens.
func TestGatewayFindsTheFirstLoginMadeWhileItRuns(t *testing.T) {
	p := oauthtest.NewProvider(t)
	r := oauthtest.NewResource(t, p)
	cfg := identityConfig(t, p, r)
	var stderr lockedBuffer
	base := serveIdentity(t, cfg, &stderr)
	for !strings.Contains(stderr.String(), "upstream down") { // its first try, without a login
		select {
		case <-t.Context().Done():
			t.Fatal(t.Context().Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(cfg), "state", upstreamauth.KeyFile)); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the token key before the first login: %v, want none", err)
	}
	runLogin(t, p, cfg)
	awaitReady(t, base+"/readyz") // the upstream is connected: with the login
	res, err := connectAs(t, base+"/mcp", p.UserJWT(t, oauthtest.Bob)).CallTool(t.Context(), &sdk.CallToolParams{Name: "call_tool",
		Arguments: map[string]any{"name": "notes_whoami", "arguments": map[string]any{}}})
	if bad, text := refused(res, err); bad || !strings.Contains(text, oauthtest.Bob.ID) {
		t.Fatalf("bob's call: got %q (refused %v), want bob", text, bad)
	}
}
