package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-router/mcp-router/proxy/call"
	"github.com/mcp-router/mcp-router/proxy/frontdoor"
)

// tokenClientEra connects a real MCP client over HTTP with a bearer
// token, in the protocol era era.
func tokenClientEra(t *testing.T, url, token string, era *sdk.ClientSessionOptions) *sdkClient {
	t.Helper()
	cl, c := newSDKClient()
	s, err := cl.Connect(t.Context(), &sdk.StreamableClientTransport{Endpoint: url + "/mcp", MaxRetries: -1,
		HTTPClient: &http.Client{Transport: bearerTransport{token}}}, era)
	if err != nil {
		t.Fatalf("connect over HTTP with a token: %v", err)
	}
	c.session = s
	t.Cleanup(func() { s.Close() })
	return c
}

// twoTokenGateway serves a hub with the fake upstream alpha over HTTP to
// the tokens alice and bob.
func twoTokenGateway(t *testing.T, opts Options) (alice, bob *sdkClient) {
	return twoTokenGatewayEra(t, opts, sessionEra)
}

func twoTokenGatewayEra(t *testing.T, opts Options, era *sdk.ClientSessionOptions) (alice, bob *sdkClient) {
	t.Helper()
	opts.Upstreams, opts.Builtin = []UpstreamConfig{builtinFake("alpha")}, fakeBuiltins
	srv := NewServer(ServerOptions{Hub: startHubWith(t, opts)})
	ts := httptest.NewServer(frontdoor.Guard(srv.HTTPHandler(), frontdoor.Options{BearerTokens: []string{"alice-token", "bob-token"}}))
	t.Cleanup(ts.Close)
	t.Cleanup(srv.Close)
	return tokenClientEra(t, ts.URL, "alice-token", era), tokenClientEra(t, ts.URL, "bob-token", era)
}

// wantRefusedKind fails the test unless res is a refusal of kind whose text
// says each of want.
func wantRefusedKind(t *testing.T, what string, res *sdk.CallToolResult, kind Kind, want ...string) map[string]any {
	t.Helper()
	text := resultText(res)
	if !res.IsError {
		t.Fatalf("%s: got %q, want a %s error", what, text, kind)
	}
	for _, w := range append(want, string(kind)) {
		if !strings.Contains(text, w) {
			t.Errorf("%s: error %q does not say %q", what, text, w)
		}
	}
	raw, _ := json.Marshal(res.StructuredContent)
	var sc struct {
		Error map[string]any `json:"error"`
	}
	if err := json.Unmarshal(raw, &sc); err != nil || sc.Error["kind"] != string(kind) {
		t.Errorf("%s: structuredContent %s, want error kind %s", what, raw, kind)
	}
	return sc.Error
}

func wantServed(t *testing.T, what string, res *sdk.CallToolResult) {
	t.Helper()
	if res.IsError {
		t.Fatalf("%s: %s, want it served", what, resultText(res))
	}
}

// A quota of one principal and a tool glob admits calls-per-minute calls
// of that principal to the tools it matches, whatever the route (a direct
// call, call_tool, a plan's step), and refuses the next with
// quota_exceeded naming the quota and when to retry. Another principal,
// and another tool, are not counted.
func TestQuotaPerPrincipalAtTheEdge(t *testing.T) {
	q := Quota{Principal: frontdoor.TokenFingerprint("alice-token"), Tool: "alpha_e*", CallsPerMinute: 2}
	alice, bob := twoTokenGateway(t, Options{Quotas: []Quota{q}})

	wantServed(t, "alice's direct call", alice.call(t, "alpha_echo", map[string]any{"text": "1"}))
	wantServed(t, "alice's call_tool", alice.call(t, "call_tool", map[string]any{"name": "alpha_echo", "arguments": map[string]any{"text": "2"}}))
	detail := wantRefusedKind(t, "alice's third call", alice.call(t, "alpha_echo", map[string]any{"text": "3"}),
		call.KindQuotaExceeded, "alpha_echo", "calls_per_minute=2", frontdoor.TokenFingerprint("alice-token"), "retry after")
	if ms, _ := detail["retry_after_ms"].(float64); ms <= 0 || ms > 60_000 {
		t.Errorf("retry_after_ms = %v, want within the minute", detail["retry_after_ms"])
	}
	res := alice.call(t, "run_plan", map[string]any{"steps": []any{
		map[string]any{"id": "a", "tool": "alpha_echo", "args": map[string]any{"text": "4"}}}})
	if text := resultText(res); !res.IsError || !strings.Contains(text, "quota_exceeded") {
		t.Errorf("alice's plan step past the quota: %q, want quota_exceeded", text)
	}
	wantServed(t, "alice's call of a tool the quota does not match", alice.call(t, "alpha_pid", nil))
	for i := range 3 {
		wantServed(t, "bob's call", bob.call(t, "alpha_echo", map[string]any{"text": string(rune('a' + i))}))
	}
}

// A quota for "*" counts each principal on its own: each has its calls
// per minute of the tool.
func TestQuotaEveryPrincipalPerTool(t *testing.T) {
	alice, bob := twoTokenGateway(t, Options{Quotas: []Quota{{Principal: "*", Tool: "alpha_pid", CallsPerMinute: 1}}})
	wantServed(t, "alice's first call", alice.call(t, "alpha_pid", nil))
	wantRefusedKind(t, "alice's second call", alice.call(t, "alpha_pid", nil), call.KindQuotaExceeded, "alpha_pid", "calls_per_minute=1")
	wantServed(t, "bob's first call", bob.call(t, "alpha_pid", nil))
	wantRefusedKind(t, "bob's second call", bob.call(t, "alpha_pid", nil), call.KindQuotaExceeded, frontdoor.TokenFingerprint("bob-token"))
	wantServed(t, "alice's call of another tool", alice.call(t, "alpha_echo", map[string]any{"text": "x"}))
}

// A concurrency quota refuses a call while its principal has that many
// running, and admits one again once a running call ends.
func TestQuotaConcurrent(t *testing.T) {
	h := startHubWith(t, Options{Upstreams: []UpstreamConfig{builtinFake("alpha")}, Builtin: fakeBuiltins,
		Quotas: []Quota{{Principal: LocalPrincipal, Tool: "*", Concurrent: 1}}})
	waitForTool(t, h, "alpha_hang")
	ctx, cancel := context.WithCancel(t.Context())
	done, holding := make(chan error, 1), make(chan struct{})
	var once sync.Once
	go func() { // hang reports progress once it has the call: past the quota
		_, err := h.CallTool(ctx, "alpha_hang", nil, func(Progress) { once.Do(func() { close(holding) }) })
		done <- err
	}()
	select {
	case <-holding:
	case err := <-done:
		t.Fatalf("the hanging call ended: %v", err)
	case <-time.After(faultWait):
		t.Fatal("the hanging call never reached its upstream")
	}
	_, err := h.CallTool(t.Context(), "alpha_echo", map[string]any{"text": "hi"}, nil)
	var qe *QuotaError
	if !errors.As(err, &qe) || !qe.Concurrent || !strings.Contains(err.Error(), "quota_exceeded") ||
		!strings.Contains(err.Error(), "concurrent=1") {
		t.Fatalf("a second call while one runs: %v, want quota_exceeded for concurrent=1", err)
	}
	cancel()
	<-done
	if got := callText(t, h, "alpha_echo", map[string]any{"text": "hi"}); got != "hi" {
		t.Errorf("a call after the running one ended: %q, want hi", got)
	}
}

// The repeat breaker lets a session make the same call (same tool, same
// arguments) RepeatCalls times in a row, refuses the next with
// repeated_call, and starts counting again after a different call. Each
// session counts on its own.
func TestRepeatedCallBreaker(t *testing.T) {
	alice, bob := twoTokenGateway(t, Options{RepeatCalls: 2})
	same := map[string]any{"text": "same"}
	wantServed(t, "first", alice.call(t, "alpha_echo", same))
	wantServed(t, "second, through call_tool", alice.call(t, "call_tool", map[string]any{"name": "alpha_echo", "arguments": same}))
	wantRefusedKind(t, "third", alice.call(t, "alpha_echo", same), call.KindRepeatedCall, "alpha_echo", "2 times in a row", "change approach")
	wantRefusedKind(t, "fourth", alice.call(t, "alpha_echo", same), call.KindRepeatedCall)
	wantServed(t, "bob's same call", bob.call(t, "alpha_echo", same))
	wantServed(t, "other arguments", alice.call(t, "alpha_echo", map[string]any{"text": "other"}))
	wantServed(t, "the same call after a different one", alice.call(t, "alpha_echo", same))
	wantServed(t, "and again", alice.call(t, "alpha_echo", same))
	wantRefusedKind(t, "past the bound again", alice.call(t, "alpha_echo", same), call.KindRepeatedCall)
}

// Clients of the stateless protocol have no session: the repeat breaker
// counts each credential's calls, never two clients' together.
func TestRepeatedCallBreakerStatelessCountsPerToken(t *testing.T) {
	alice, bob := twoTokenGatewayEra(t, Options{RepeatCalls: 2}, nil) // the SDK's default: stateless
	same := map[string]any{"text": "same"}
	wantServed(t, "first", alice.call(t, "alpha_echo", same))
	wantServed(t, "second", alice.call(t, "alpha_echo", same))
	wantRefusedKind(t, "third", alice.call(t, "alpha_echo", same), call.KindRepeatedCall)
	wantServed(t, "bob's same call", bob.call(t, "alpha_echo", same))
	wantServed(t, "bob's second", bob.call(t, "alpha_echo", same))
	wantRefusedKind(t, "bob's third", bob.call(t, "alpha_echo", same), call.KindRepeatedCall)
}
