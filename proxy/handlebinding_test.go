package proxy

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	mcpclient "github.com/mark3labs/mcp-go/client"
	mcptransport "github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-router/mcp-router/proxy/frontdoor"
)

// Behind the front door, which takes the Authorization header away, a
// 2026-07-28 handle is still bound to the caller that got it: the same
// token's next call carries the handle's state, another token's call
// gets a fresh start and a note.
func TestHandleBoundToCallerBehindGuard(t *testing.T) {
	srv := erasServer(t)
	ts := httptest.NewServer(frontdoor.Guard(srv.HTTPHandler(), frontdoor.Options{BearerTokens: []string{"alice-token", "bob-token"}}))
	t.Cleanup(ts.Close)
	alice, bob := connectWithToken(t, ts.URL, "alice-token"), connectWithToken(t, ts.URL, "bob-token")
	handle := handleOf(t, alice.call(t, "request_more_tools", map[string]any{"query": "echo the text back", "tools": []any{"beta_echo"}}))
	args := map[string]any{"name": "beta_echo", "arguments": map[string]any{"text": "hi"}, "handle": handle}
	if res := alice.call(t, "call_tool", args); res.IsError || strings.Contains(allText(res), "handle passed was ignored") {
		t.Errorf("alice with her handle: %s", allText(res))
	}
	if res := bob.call(t, "call_tool", args); !strings.Contains(allText(res), "minted for another credential") {
		t.Errorf("bob with alice's handle: %s, want it ignored as another credential's", allText(res))
	}
}

// A handle minted by the server of one profile is ignored by another's:
// each server signs its handles with its own key.
func TestHandleStaysInItsProfile(t *testing.T) {
	a, b := erasServer(t), erasServer(t)
	h := frontdoor.ByProfile(a.HTTPHandler(), map[string]http.Handler{"b": b.HTTPHandler()})
	ts := httptest.NewServer(frontdoor.Guard(h, frontdoor.Options{Tokens: []frontdoor.Token{{Token: "a-token"}, {Token: "b-token", Profile: "b"}}}))
	t.Cleanup(ts.Close)
	inA, inB := connectWithToken(t, ts.URL, "a-token"), connectWithToken(t, ts.URL, "b-token")
	handle := handleOf(t, inA.call(t, "request_more_tools", map[string]any{"query": "echo the text back", "tools": []any{"beta_echo"}}))
	res := inB.call(t, "call_tool", map[string]any{"name": "beta_echo", "arguments": map[string]any{"text": "hi"}, "handle": handle})
	if !strings.Contains(allText(res), "not one this gateway minted") {
		t.Errorf("profile b with profile a's handle: %s, want it ignored", allText(res))
	}
}

// connectWithToken is mcp-go's client of base's /mcp with a bearer token,
// on the newest protocol (2026-07-28).
func connectWithToken(t *testing.T, base, token string) *eraClient {
	t.Helper()
	tr, err := mcptransport.NewStreamableHTTP(base+"/mcp", mcptransport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + token}))
	if err != nil {
		t.Fatal(err)
	}
	c := mcpclient.NewClient(tr)
	t.Cleanup(func() { c.Close() })
	if err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ClientInfo = mcp.Implementation{Name: "handle-test", Version: "1"}
	if _, err := c.Initialize(t.Context(), init); err != nil {
		t.Fatal(err)
	}
	return &eraClient{Client: c}
}
