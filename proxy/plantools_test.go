package proxy

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/server"

	"github.com/mcp-router/mcp-router/internal/fakeollama"
	"github.com/mcp-router/mcp-router/planner"
	"github.com/mcp-router/mcp-router/prompts"
	"github.com/mcp-router/mcp-router/proxy/approval"
	"github.com/mcp-router/mcp-router/routing"
	"github.com/mcp-router/mcp-router/routing/lessons"
	"github.com/mcp-router/mcp-router/state"
)

// fakePlanner is a planner whose model is a fake Ollama answering every
// chat with chat; the Ollama server stops when the test ends.
func fakePlanner(t testing.TB, chat func(fakeollama.ChatRequest) (string, error)) *planner.Planner {
	t.Helper()
	fo := fakeollama.New(fakeollama.Options{Chat: chat})
	t.Cleanup(fo.Close)
	llm, err := planner.NewOllamaLLM(planner.OllamaOptions{URL: fo.URL(), Model: "test-model"})
	if err != nil {
		t.Fatal(err)
	}
	tmpl, err := prompts.Load("decide", "")
	if err != nil {
		t.Fatal(err)
	}
	return planner.New(planner.Options{LLM: llm, Template: tmpl, Timeout: 10 * time.Second})
}

// plan takes the client's own tools: the planner is offered them, a plan
// that uses one is returned for the client to run and not executed, and
// bad entries are errors naming them.
func TestPlanTakesTheClientsOwnTools(t *testing.T) {
	var mu sync.Mutex
	var prompt string
	p := fakePlanner(t, func(r fakeollama.ChatRequest) (string, error) {
		mu.Lock()
		defer mu.Unlock()
		prompt = ""
		for _, m := range r.Messages {
			prompt += m.Content
		}
		return `{"decision":"USE_TOOL","confidence":0.9,"reasoning":"echo, then tell the user",` +
			`"plan":{"steps":[{"id":"e","tool":"alpha_echo","args":{"text":"hello"}},` +
			`{"id":"n","tool":"notify_user","args":{"text":"$<<e.text>>"},"purpose":"Tell the user."}]}}`, nil
	})
	h := startHub(t, builtinFake("alpha"))
	c := overHTTPWith(t, ServerOptions{Hub: h, Router: routing.NewRouter(routing.RouterOptions{}), Planner: p,
		Session: routing.SessionOptions{MaxDiscoveries: 100, ResetAfter: time.Hour}})

	res := c.call(t, "plan", map[string]any{"query": "echo hello, then notify the user", "execute": true,
		"tools": []any{"alpha_echo", map[string]any{"name": "notify_user", "description": "Notify the user with a text.",
			"input_schema": map[string]any{"type": "object", "properties": map[string]any{"text": map[string]any{"type": "string"}}}}}})
	if res.IsError {
		t.Fatalf("plan: %s", resultText(res))
	}
	sc, _ := res.StructuredContent.(map[string]any)
	dec, _ := sc["decision"].(map[string]any)
	if dec["decision"] != planner.UseTool || !strings.Contains(strings.Join(anyStrings(dec["own_tools"]), ","), "notify_user") {
		t.Errorf("decision %v, want USE_TOOL using own tool notify_user", dec)
	}
	if _, ran := sc["result"]; ran || !strings.Contains(resultText(res), "run it yourself") {
		t.Errorf("a plan of the client's own tools ran (result %v) or the text %q does not say to run it", sc["result"], resultText(res))
	}
	mu.Lock()
	if !strings.Contains(prompt, "notify_user") || !strings.Contains(prompt, "Notify the user with a text.") {
		t.Errorf("the planner's prompt does not offer notify_user:\n%s", prompt)
	}
	mu.Unlock()

	for _, bad := range []struct {
		tools any
		want  string
	}{
		{"notify_user", `"tools" must be a list`},
		{[]any{"no_such_tool"}, `"no_such_tool" is not a catalog tool`},
		{[]any{map[string]any{"description": "no name"}}, `"tools"[0]: "name"`},
		{[]any{map[string]any{"name": "alpha_echo"}}, `"alpha_echo" is a gateway tool`},
		{[]any{map[string]any{"name": "x", "input_schema": "object"}}, "input schema must be an object"},
	} {
		res := c.call(t, "plan", map[string]any{"query": "do it", "tools": bad.tools})
		if !res.IsError || !strings.Contains(resultText(res), bad.want) {
			t.Errorf("tools %v: %q, want an error containing %q", bad.tools, resultText(res), bad.want)
		}
	}
}

func anyStrings(v any) []string {
	list, _ := v.([]any)
	out := make([]string, 0, len(list))
	for _, e := range list {
		if s, ok := e.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// fileLessons is a lessons memory kept in a state.db of the test's,
// closed when the test ends.
func fileLessons(t testing.TB) *lessons.Memory {
	t.Helper()
	db, err := state.Open(context.Background(), state.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	mem, err := lessons.NewMemory(context.Background(), db.Lessons(), lessons.MemoryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(mem.Close) // before the database closes
	return mem
}

// plan with execute escalates when a step of the plan it ran failed: the
// decision becomes ESCALATE with reason tool_failure, no longer a success
// (seed 003's "tool failed" rule), as `mcp-router plan --run` does.
func TestPlanExecuteEscalatesAFailedStep(t *testing.T) {
	p := fakePlanner(t, func(fakeollama.ChatRequest) (string, error) {
		return `{"decision":"USE_TOOL","confidence":0.9,"reasoning":"one call",` +
			`"plan":{"steps":[{"id":"f","tool":"alpha_fail","args":{}}]}}`, nil
	})
	h := startHub(t, builtinFake("alpha"))
	c := overHTTPWith(t, ServerOptions{Hub: h, Router: routing.NewRouter(routing.RouterOptions{}), Planner: p,
		Session: routing.SessionOptions{MaxDiscoveries: 100, ResetAfter: time.Hour}})

	res := c.call(t, "plan", map[string]any{"query": "always fail", "execute": true, "tools": []any{"alpha_fail"}})
	sc, _ := res.StructuredContent.(map[string]any)
	dec, _ := sc["decision"].(map[string]any)
	if _, ran := sc["result"]; !ran {
		t.Fatalf("the plan did not run: %s", resultText(res))
	}
	if dec["decision"] != planner.Escalate || dec["success"] != false ||
		!strings.HasPrefix(fmt.Sprint(dec["escalation_reason"]), planner.ReasonToolFailure) {
		t.Errorf("decision %v, want ESCALATE with reason %s and success false", dec, planner.ReasonToolFailure)
	}
	if !strings.Contains(resultText(res), "alpha_fail") {
		t.Errorf("the text does not name the failed step's tool:\n%s", resultText(res))
	}
}

// plan with execute passes the approval gate as run_plan does: the plan
// it made has a gated step, its client cannot be asked, so it gets
// approval_unavailable and no step reaches the upstream.
func TestPlanExecuteAsksApproval(t *testing.T) {
	p := fakePlanner(t, func(fakeollama.ChatRequest) (string, error) {
		return `{"decision":"USE_TOOL","confidence":0.9,"reasoning":"one call",` +
			`"plan":{"steps":[{"id":"n","tool":"alpha_num","args":{"n":1}}]}}`, nil
	})
	s := newShifty()
	h := startHubWith(t, Options{
		Upstreams: []UpstreamConfig{{Name: "alpha", Transport: TransportBuiltin, Builtin: "alpha", Prefix: "alpha_"}},
		Builtin:   func(string, []string) (*server.MCPServer, error) { return s.srv, nil },
		Approvals: approval.Policy{Tools: []string{"alpha_num"}},
	})
	c := overHTTPWith(t, ServerOptions{Hub: h, Router: routing.NewRouter(routing.RouterOptions{}), Planner: p,
		Session: routing.SessionOptions{MaxDiscoveries: 100, ResetAfter: time.Hour}})

	res := c.call(t, "plan", map[string]any{"query": "take n", "execute": true, "tools": []any{"alpha_num"}})
	if text := resultText(res); !strings.Contains(text, "approval_unavailable") || s.seen("num") != 0 {
		t.Errorf("plan execute of a gated step for a client that cannot be asked: %q, upstream saw %d calls; want approval_unavailable and none", text, s.seen("num"))
	}
}
