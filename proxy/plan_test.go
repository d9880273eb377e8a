package proxy

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mcp-router/mcp-router/routing"
)

func TestRunPlanChainsAndFansOut(t *testing.T) {
	for _, tr := range routedTransports {
		t.Run(tr.name, func(t *testing.T) {
			c, _, _ := routed(t, tr.connect)
			res := c.call(t, "run_plan", map[string]any{"steps": []any{
				map[string]any{"id": "a", "tool": "alpha_echo", "args": map[string]any{"text": "hi"}},
				map[string]any{"id": "b", "tool": "beta_sleep", "args": map[string]any{"ms": 1}},
				map[string]any{"id": "c", "tool": "beta_echo", "args": map[string]any{"text": "$<<a.text>> from $<<a.server>>"}},
			}})
			if res.IsError {
				t.Fatalf("run_plan: %s", resultText(res))
			}
			var out struct {
				Strategy string
				Steps    []struct {
					ID, Status string
					Result     any
				}
			}
			b, _ := json.Marshal(res.StructuredContent)
			if err := json.Unmarshal(b, &out); err != nil {
				t.Fatal(err)
			}
			if out.Strategy != "HYBRID_TOOLS" || len(out.Steps) != 3 || out.Steps[2].Result.(map[string]any)["text"] != "hi from alpha" {
				t.Errorf("got %s", b)
			}
			if !strings.Contains(resultText(res), "c (beta_echo): succeeded") {
				t.Errorf("summary text: %q", resultText(res))
			}
		})
	}
}

func TestRunPlanInvalidPlanIsACorrectableError(t *testing.T) {
	c, _, _ := routed(t, overHTTPWith)
	res := c.call(t, "run_plan", map[string]any{"steps": []any{
		map[string]any{"id": "a", "tool": "alpha_nope"},
		map[string]any{"id": "b", "tool": "alpha_echo", "args": map[string]any{"text": "$<<zz>>"}},
	}})
	text := resultText(res)
	if !res.IsError || !strings.Contains(text, "alpha_nope") || !strings.Contains(text, `"zz"`) {
		t.Errorf("invalid plan: isError %v, text %q; want both problems named", res.IsError, text)
	}
	if got := resultText(c.call(t, "alpha_cancellations", nil)); got != "0" {
		t.Errorf("an invalid plan made calls: %s", got)
	}
	bad := c.call(t, "run_plan", map[string]any{"steps": []any{}, "stpes": 1})
	if !bad.IsError || !strings.Contains(resultText(bad), "stpes") {
		t.Errorf("unknown key: %q", resultText(bad))
	}
}

func TestRunPlanFailedStepIsAnError(t *testing.T) {
	c, _, _ := routed(t, overHTTPWith)
	res := c.call(t, "run_plan", map[string]any{"steps": []any{
		map[string]any{"id": "f", "tool": "alpha_fail"},
		map[string]any{"id": "d", "tool": "alpha_echo", "args": map[string]any{"text": "$<<f>>"}},
	}})
	if !res.IsError || !strings.Contains(resultText(res), "f (alpha_fail): failed") || !strings.Contains(resultText(res), "d (alpha_echo): skipped") {
		t.Errorf("got isError %v: %s", res.IsError, resultText(res))
	}
}

func TestRunPlanCountsForTheBreaker(t *testing.T) {
	h := startHub(t, builtinFake("alpha"))
	c := overHTTPWith(t, ServerOptions{Hub: h, Router: routing.NewRouter(routing.RouterOptions{}),
		Session: routing.SessionOptions{MaxDiscoveries: 1, ResetAfter: time.Hour}})
	c.call(t, "request_more_tools", map[string]any{"query": "echo"})
	c.drainChanged()
	c.call(t, "run_plan", map[string]any{"steps": []any{map[string]any{"id": "a", "tool": "alpha_echo", "args": map[string]any{"text": "x"}}}})
	c.waitChanged(t) // request_more_tools is back after a successful step
}
