package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"slices"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-router/mcp-router/internal/fakeupstream"
	"github.com/mcp-router/mcp-router/internal/oidctest"
)

const oidcResource = "http://127.0.0.1/mcp"

// oidcGateway runs the built binary over HTTP with tokens from a real
// OIDC provider: callers in group "staff" are served the staff profile
// (the calculator, the gateway's own profile), those in "admins" the
// admin profile (a fake stdio upstream). It returns the issuer and the
// gateway's base URL.
func oidcGateway(t *testing.T) (*oidctest.Issuer, string) {
	t.Helper()
	iss := oidctest.Start(t, oidcResource,
		oidctest.Client{ID: "ada", Secret: "ada-secret", Claims: map[string]any{"groups": []any{"admins"}}},
		oidctest.Client{ID: "bob", Secret: "bob-secret", Claims: map[string]any{"groups": []any{"staff"}}},
		oidctest.Client{ID: "eve", Secret: "eve-secret"})
	exe, env := fakeupstream.Command("fake")
	dir := t.TempDir()
	cfg := writeFile(t, dir, "p.yaml", fmt.Sprintf(`http:
  oidc:
    issuer: %s
    resource: %s
    profiles:
      - {claim: groups, value: admins, profile: admin}
      - {claim: groups, value: staff, profile: staff}
default_profile: staff
profiles:
  staff:
    upstreams:
      calculator: {builtin: calculator}
  admin:
    upstreams:
      fake: {command: %q, env: {%s: %s}, prefix: fake_}
`, iss.URL, oidcResource, exe, fakeupstream.EnvVar, env[fakeupstream.EnvVar]))
	cmd := exec.Command(buildBinary(t), "serve", "--http", "127.0.0.1:0", "--config", cfg)
	cmd.Env = isolatedEnv(dir)
	u := startServeHTTP(t, cmd)
	awaitReady(t, u+"/readyz")
	return iss, u
}

// connectAs is a go-sdk client session of endpoint with token.
func connectAs(t *testing.T, endpoint, token string) *sdk.ClientSession {
	t.Helper()
	cl := sdk.NewClient(&sdk.Implementation{Name: "oidc-test", Version: "1"}, nil)
	s, err := cl.Connect(t.Context(), &sdk.StreamableClientTransport{Endpoint: endpoint, MaxRetries: -1,
		HTTPClient: &http.Client{Transport: tokenTransport{token}}}, nil)
	if err != nil {
		t.Fatalf("connecting to %s: %v", endpoint, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func toolNames(t *testing.T, s *sdk.ClientSession) []string {
	t.Helper()
	res, err := s.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	return names
}

// refused reports whether a call failed, as a protocol error or a tool
// error, and what it said.
func refused(res *sdk.CallToolResult, err error) (bool, string) {
	if err != nil {
		return true, err.Error()
	}
	return res.IsError, sdkText(res)
}

// Visibility is authorization, end to end through the binary with a real
// MCP client: a caller's token maps it to a profile, and it can list and
// call that profile's tools only, by every route (tools/list on /mcp and
// /mcp/all, a direct tools/call, call_tool, describe_tools, run_plan),
// while the caller of the other profile calls the same tool.
func TestOIDCVisibilityIsAuthorization(t *testing.T) {
	iss, base := oidcGateway(t)
	admin := connectAs(t, base+"/mcp", iss.Token(t, "ada", "ada-secret"))
	staff := connectAs(t, base+"/mcp", iss.Token(t, "bob", "bob-secret"))
	staffAll := connectAs(t, base+"/mcp/all", iss.Token(t, "bob", "bob-secret"))
	adminAll := connectAs(t, base+"/mcp/all", iss.Token(t, "ada", "ada-secret"))

	// The admin's calls work: the refusals below are about the profile.
	res, err := admin.CallTool(t.Context(), &sdk.CallToolParams{Name: "call_tool",
		Arguments: map[string]any{"name": "fake_echo", "arguments": map[string]any{"text": "hello"}}})
	if bad, text := refused(res, err); bad || !strings.Contains(text, "hello") {
		t.Fatalf("admin call_tool fake_echo: got %q (refused %v), want hello", text, bad)
	}
	if names := toolNames(t, adminAll); !slices.Contains(names, "fake_echo") || slices.ContainsFunc(names, isCalculator) {
		t.Errorf("admin /mcp/all: got %v, want fake_echo and no calculator tool", names)
	}
	if names := toolNames(t, staffAll); slices.Contains(names, "fake_echo") || !slices.ContainsFunc(names, isCalculator) {
		t.Errorf("staff /mcp/all: got %v, want calculator tools and no fake_echo", names)
	}
	if names := toolNames(t, staff); slices.Contains(names, "fake_echo") {
		t.Errorf("staff tools/list: got %v, want no fake_echo", names)
	}

	const echoed = "only-admins-hear-this"
	for _, tc := range []struct {
		name string
		s    *sdk.ClientSession
		call *sdk.CallToolParams
	}{
		{"direct tools/call", staffAll, &sdk.CallToolParams{Name: "fake_echo", Arguments: map[string]any{"text": echoed}}},
		{"call_tool", staff, &sdk.CallToolParams{Name: "call_tool",
			Arguments: map[string]any{"name": "fake_echo", "arguments": map[string]any{"text": echoed}}}},
		{"run_plan", staff, &sdk.CallToolParams{Name: "run_plan", Arguments: map[string]any{"steps": []any{
			map[string]any{"id": "a", "tool": "fake_echo", "args": map[string]any{"text": echoed}}}}}},
	} {
		res, err := tc.s.CallTool(t.Context(), tc.call)
		bad, text := refused(res, err)
		t.Logf("staff %s of fake_echo: %.200s", tc.name, text)
		if strings.Contains(text, echoed) || !bad && !strings.Contains(text, "failed") {
			t.Errorf("staff %s of fake_echo: got %q (refused %v), want it refused and not run", tc.name, text, bad)
		}
	}
	res, err = staff.CallTool(t.Context(), &sdk.CallToolParams{Name: "describe_tools",
		Arguments: map[string]any{"tools": []any{"fake_echo"}}})
	if err == nil && !res.IsError && strings.Contains(sdkText(res), "Echo the text back") {
		t.Errorf("staff describe_tools fake_echo: got %q, want no description of it", sdkText(res))
	}
	res, err = admin.CallTool(t.Context(), &sdk.CallToolParams{Name: "describe_tools",
		Arguments: map[string]any{"tools": []any{"fake_echo"}}})
	if bad, text := refused(res, err); bad || !strings.Contains(text, "Echo the text back") {
		t.Errorf("admin describe_tools fake_echo: got %q (refused %v), want its description", text, bad)
	}
}

func isCalculator(name string) bool { return strings.HasPrefix(name, "calculator_") }

// Without a valid token the gateway answers 401 with a challenge naming
// its protected-resource metadata, which it serves; a token that maps to
// no profile gets 403; another profile's session is not found.
func TestOIDCChallengeAndMetadata(t *testing.T) {
	iss, base := oidcGateway(t)
	post := func(token, session string) *http.Response {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, base+"/mcp", strings.NewReader(
			`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
			req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	expired := iss.Claims("ada")
	expired["exp"] = 1
	wantMeta := `resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource/mcp"`
	for name, token := range map[string]string{"none": "", "expired": iss.Sign(t, expired), "unknown key": iss.SignUnknownKey(t, iss.Claims("ada"))} {
		resp := post(token, "")
		if ch := resp.Header.Get("WWW-Authenticate"); resp.StatusCode != http.StatusUnauthorized || !strings.Contains(ch, wantMeta) {
			t.Errorf("%s: got %d %q, want 401 with %s", name, resp.StatusCode, ch, wantMeta)
		}
	}
	if resp := post(iss.Token(t, "eve", "eve-secret"), ""); resp.StatusCode != http.StatusForbidden {
		t.Errorf("a token no rule maps: got %d, want 403", resp.StatusCode)
	}
	resp := post(iss.Token(t, "bob", "bob-secret"), "")
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || sid == "" {
		t.Fatalf("staff initialize: got %d, session %q", resp.StatusCode, sid)
	}
	if resp := post(iss.Token(t, "ada", "ada-secret"), sid); resp.StatusCode != http.StatusNotFound {
		t.Errorf("the admin in the staff session: got %d, want 404", resp.StatusCode)
	}
	for _, path := range []string{"/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"} {
		r, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Resource             string   `json:"resource"`
			AuthorizationServers []string `json:"authorization_servers"`
		}
		err = json.NewDecoder(r.Body).Decode(&doc)
		r.Body.Close()
		if err != nil || r.StatusCode != http.StatusOK || doc.Resource != oidcResource || !slices.Equal(doc.AuthorizationServers, []string{iss.URL}) {
			t.Errorf("%s: got %d %+v (%v)", path, r.StatusCode, doc, err)
		}
	}
	// /mcp/all is a resource of its own: its challenge names its metadata.
	all, err := http.Post(base+"/mcp/all", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	all.Body.Close()
	wantAll := `resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource/mcp/all"`
	if ch := all.Header.Get("WWW-Authenticate"); all.StatusCode != http.StatusUnauthorized || !strings.Contains(ch, wantAll) {
		t.Errorf("/mcp/all without a token: got %d %q, want 401 with %s", all.StatusCode, ch, wantAll)
	}
	r, err := http.Get(base + "/.well-known/oauth-protected-resource/mcp/all")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Resource string `json:"resource"`
	}
	err = json.NewDecoder(r.Body).Decode(&doc)
	r.Body.Close()
	if err != nil || r.StatusCode != http.StatusOK || doc.Resource != oidcResource+"/all" {
		t.Errorf("metadata of /mcp/all: got %d %+v (%v), want resource %s/all", r.StatusCode, doc, err, oidcResource)
	}
}
