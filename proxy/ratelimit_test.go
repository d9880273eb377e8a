package proxy

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-router/mcp-router/proxy/call"
)

// slowRefill refills a bucket once in 100 s: within a test, a session has
// its burst and nothing more.
const slowRefill = 0.01

// rateLimitedDetail is the error part of a refused call's structuredContent.
type rateLimitedDetail struct {
	Kind         string `json:"kind"`
	Tool         string `json:"tool"`
	Upstream     string `json:"upstream"`
	RetryAfterMS int64  `json:"retry_after_ms"`
}

// wantRateLimited fails the test unless res is a rate_limited refusal of
// tool on upstream with a retry-after hint, in its text and its
// structuredContent.
func wantRateLimited(t *testing.T, what string, res *sdk.CallToolResult, tool, upstream string) {
	t.Helper()
	text := resultText(res)
	if !res.IsError {
		t.Fatalf("%s: got %q, want a rate_limited error", what, text)
	}
	for _, want := range []string{tool, upstream, "rate_limited", "retry after"} {
		if !strings.Contains(text, want) {
			t.Errorf("%s: error %q does not say %q", what, text, want)
		}
	}
	raw, _ := json.Marshal(res.StructuredContent)
	var sc struct {
		Error rateLimitedDetail `json:"error"`
	}
	if err := json.Unmarshal(raw, &sc); err != nil {
		t.Fatalf("%s: structuredContent %s: %v", what, raw, err)
	}
	want := rateLimitedDetail{Kind: string(call.KindRateLimited), Tool: tool, Upstream: upstream, RetryAfterMS: sc.Error.RetryAfterMS}
	if sc.Error != want || sc.Error.RetryAfterMS <= 0 {
		t.Errorf("%s: structuredContent error %+v, want %+v with retry_after_ms > 0", what, sc.Error, want)
	}
}

// SEC-15: each client session has its own bucket. A session past its
// burst gets rate_limited for direct calls and call_tool alike (each
// counted under the tool called, refusals counted in the calls metric);
// another session of the same server is served.
func TestSEC15PerClientRateLimit(t *testing.T) {
	m := NewMetrics()
	srv := NewServer(ServerOptions{Hub: startHub(t, builtinFake("alpha")), Metrics: m,
		RateLimit: RateLimit{CallsPerSecond: slowRefill, Burst: 2}})
	ts := httptest.NewServer(srv.HTTPHandler())
	t.Cleanup(ts.Close)
	t.Cleanup(srv.Close)
	greedy, other := sdkOverHTTP(t, ts.URL), sdkOverHTTP(t, ts.URL)

	echo := map[string]any{"text": "hi"}
	viaCallTool := map[string]any{"name": "alpha_echo", "arguments": echo}
	if res := greedy.call(t, "alpha_echo", echo); res.IsError {
		t.Fatalf("first call: %s", resultText(res))
	}
	if res := greedy.call(t, "call_tool", viaCallTool); res.IsError {
		t.Fatalf("second call: %s", resultText(res))
	}
	wantRateLimited(t, "a direct call past the burst", greedy.call(t, "alpha_echo", echo), "alpha_echo", "alpha")
	wantRateLimited(t, "call_tool past the burst", greedy.call(t, "call_tool", viaCallTool), "alpha_echo", "alpha")

	for i := range 2 {
		if res := other.call(t, "alpha_echo", echo); res.IsError || resultText(res) != "hi" {
			t.Fatalf("the other session's call %d: %q (isError %v), want it served", i+1, resultText(res), res.IsError)
		}
	}
	key := `mcp_router_tool_calls_total{outcome="rate_limited",tool="alpha_echo",upstream="alpha"}`
	if got := scrapeMetrics(t, m)[key]; got != 2 {
		t.Errorf("%s = %v, want 2", key, got)
	}
}

// SEC-15: over stdio the one client is limited too.
func TestSEC15RateLimitOverStdio(t *testing.T) {
	c := overStdioWith(t, ServerOptions{Hub: startHub(t, builtinFake("alpha")), RateLimit: RateLimit{CallsPerSecond: slowRefill, Burst: 1}})
	if res := c.call(t, "alpha_echo", map[string]any{"text": "hi"}); res.IsError {
		t.Fatalf("first call: %s", resultText(res))
	}
	wantRateLimited(t, "a call past the burst", c.call(t, "alpha_echo", map[string]any{"text": "hi"}), "alpha_echo", "alpha")
}

// SEC-15: a plan is no way around the limit: run_plan takes a token, and
// so does each step; a step over the limit fails rate_limited, naming its
// tool and upstream, and the session's bucket is empty afterwards.
func TestSEC15PlanStepsCountAgainstTheLimit(t *testing.T) {
	c := overHTTPWith(t, ServerOptions{Hub: startHub(t, builtinFake("alpha")), RateLimit: RateLimit{CallsPerSecond: slowRefill, Burst: 3}})
	step := func(id string) map[string]any {
		return map[string]any{"id": id, "tool": "alpha_echo", "args": map[string]any{"text": id}}
	}
	res := c.call(t, "run_plan", map[string]any{"steps": []any{step("a"), step("b"), step("c")}, "on_error": "continue"})
	raw, _ := json.Marshal(res.StructuredContent)
	var plan struct {
		Steps []struct {
			ID, Status, Error string
		} `json:"steps"`
	}
	if err := json.Unmarshal(raw, &plan); err != nil || len(plan.Steps) != 3 {
		t.Fatalf("run_plan: %s (%v)", raw, err)
	}
	var ran, limited int
	for _, st := range plan.Steps {
		switch {
		case st.Status == "succeeded":
			ran++
		case st.Status == "failed" && strings.Contains(st.Error, "rate_limited") &&
			strings.Contains(st.Error, "alpha_echo on alpha") && strings.Contains(st.Error, "retry after"):
			limited++
		default:
			t.Errorf("step %s: %s %q, want succeeded or failed rate_limited", st.ID, st.Status, st.Error)
		}
	}
	if ran != 2 || limited != 1 || !res.IsError {
		t.Errorf("run_plan with 3 tokens left: %d steps ran, %d rate_limited (isError %v), want 2 and 1 (true)", ran, limited, res.IsError)
	}
	wantRateLimited(t, "a call after the plan", c.call(t, "alpha_echo", map[string]any{"text": "hi"}), "alpha_echo", "alpha")
}
