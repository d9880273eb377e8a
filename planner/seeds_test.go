package planner

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/mcp-router/mcp-router/internal/fakeollama"
)

// seedTool is a built-in calculator tool as the router offers it, with
// its calibrated score.
func seedTool(name string, score float64) Tool {
	schema := numberSchema
	switch name {
	case "calculator_add", "calculator_multiply", "calculator_power":
		schema = twoNumbers
	}
	return Tool{Name: name, Description: "Calculator: " + strings.TrimPrefix(name, "calculator_") + ".", InputSchema: json.RawMessage(schema), Score: score}
}

// seedPlan is a USE_TOOL answer with plan's steps.
func seedPlan(steps string) string {
	return `{"decision":"USE_TOOL","confidence":0.9,"reasoning":"r","plan":{"steps":[` + steps + `]}}`
}

// Seed 001's eight example queries plan with the strategies it states.
//
// What it proves: given the plans a model writes for these queries, the
// planner derives the seed's strategy from each plan's graph and keeps the
// decision (USE_TOOL, not escalated, a success) with the tools and
// calibrated scores the built-in router gives for each query (measured
// with `mcp-router route QUERY` on the default profile). Two of the seed's
// own traps are in it: the hybrid query, whose first step's tool the
// router scores 0.039 although the request names it, and the seed's
// ${{sin_result}} reference syntax, which must be refused and rewritten
// as $<<sin_result>>, not passed on as text (which made the chain look
// parallel). It does not prove that a real model writes these plans.
func TestSeed001QueriesPlanWithTheirStrategies(t *testing.T) {
	sinSquare := `{"id":"sin_result","tool":"calculator_sin","args":{"x":1.57}},` +
		`{"id":"q","tool":"calculator_square","args":{"x":"$<<sin_result.result>>"}}`
	cases := []struct {
		query    string
		tools    []Tool
		answers  []string // the model's answer, then its answer to the retry
		strategy string
		attempts int
	}{
		{"What is 25 + 37?", []Tool{seedTool("calculator_add", 0.897)},
			[]string{seedPlan(`{"id":"a","tool":"calculator_add","args":{"a":25,"b":37}}`)}, SingleTool, 1},
		{"Calculate square root of 64",
			[]Tool{seedTool("calculator_sqrt", 0.901), seedTool("calculator_square", 0.635), seedTool("calculator_power", 0.015)},
			[]string{seedPlan(`{"id":"r","tool":"calculator_sqrt","args":{"x":64}}`)}, SingleTool, 1},
		{"What is 5 factorial and 16 squared?",
			[]Tool{seedTool("calculator_factorial", 0.901), seedTool("calculator_square", 0.901), seedTool("calculator_sqrt", 0.379)},
			[]string{seedPlan(`{"id":"f","tool":"calculator_factorial","args":{"x":5}},{"id":"q","tool":"calculator_square","args":{"x":16}}`)},
			ParallelTools, 1},
		{"Calculate sine of 1.57 and then square that result",
			[]Tool{seedTool("calculator_square", 0.85), seedTool("calculator_sin", 0.85), seedTool("calculator_sqrt", 0.37)},
			[]string{
				seedPlan(strings.Replace(sinSquare, "$<<sin_result.result>>", "${{sin_result}}", 1)), // the seed's syntax
				seedPlan(sinSquare),
			}, SequentialTools, 2},
		{"Square of 8, add 10+15, then multiply the results",
			[]Tool{seedTool("calculator_add", 0.853), seedTool("calculator_multiply", 0.853), seedTool("calculator_square", 0.039), seedTool("calculator_sqrt", 0.012)},
			[]string{seedPlan(`{"id":"s","tool":"calculator_square","args":{"x":8}},{"id":"a","tool":"calculator_add","args":{"a":10,"b":15}},` +
				`{"id":"m","tool":"calculator_multiply","args":{"a":"$<<s.result>>","b":"$<<a.result>>"}}`)},
			HybridTools, 1},
		{"Find cosine of 0.5, then add 10 and 15, multiply results",
			[]Tool{seedTool("calculator_multiply", 0.864), seedTool("calculator_add", 0.864), seedTool("calculator_cos", 0.773)},
			[]string{seedPlan(`{"id":"c","tool":"calculator_cos","args":{"x":0.5}},{"id":"a","tool":"calculator_add","args":{"a":10,"b":15}},` +
				`{"id":"m","tool":"calculator_multiply","args":{"a":"$<<c.result>>","b":"$<<a.result>>"}}`)},
			HybridTools, 1},
		{"What is 5 + 3?", []Tool{seedTool("calculator_add", 0.897)},
			[]string{seedPlan(`{"id":"a","tool":"calculator_add","args":{"a":5,"b":3}}`)}, SingleTool, 1},
		{"Calculate sine of 1.57, then square that result, and add 10",
			[]Tool{seedTool("calculator_add", 0.901), seedTool("calculator_square", 0.85), seedTool("calculator_sin", 0.85), seedTool("calculator_sqrt", 0.25)},
			[]string{seedPlan(sinSquare + `,{"id":"p","tool":"calculator_add","args":{"a":"$<<q.result>>","b":10}}`)},
			SequentialTools, 1},
	}
	var (
		mu      sync.Mutex
		retries []string
	)
	chat := func(req fakeollama.ChatRequest) (string, error) {
		user := lastUser(req)
		retry := strings.Contains(user, "Your answer was invalid")
		for _, c := range cases {
			if strings.Contains(user, "Request:\n"+c.query+"\n") || strings.HasSuffix(user, "Request:\n"+c.query) {
				if retry {
					mu.Lock()
					retries = append(retries, user)
					mu.Unlock()
					return c.answers[len(c.answers)-1], nil
				}
				return c.answers[0], nil
			}
		}
		return "no case for this request", nil
	}
	_, p := newFakePlanner(t, fakeollama.Options{Chat: chat}, Options{})
	for _, c := range cases {
		t.Run(c.query, func(t *testing.T) {
			d := p.Decide(t.Context(), Request{Query: c.query, Tools: c.tools, SuccessRate: -1})
			if d.Decision != UseTool || d.Strategy != c.strategy || d.Attempts != c.attempts {
				t.Errorf("got %s %s after %d attempts (%s), want USE_TOOL %s after %d",
					d.Decision, d.Strategy, d.Attempts, d.EscalationReason, c.strategy, c.attempts)
			}
			if !d.Success || d.Query != c.query || d.Level == Low {
				t.Errorf("got success %v, query %q, level %s (confidence %.3f, factors %v); want a success on the query, not low",
					d.Success, d.Query, d.Level, d.Confidence, d.Factors)
			}
			if strings.Contains(string(d.Plan), "${{") {
				t.Errorf("plan %s passes the seed's ${{...}} on literally", d.Plan)
			}
		})
	}
	mu.Lock()
	defer mu.Unlock()
	if len(retries) != 1 || !strings.Contains(retries[0], `step "q": args.x: "${{sin_result}}" is not this gateway's reference syntax: write "$<<sin_result>>"`) {
		t.Errorf("retry messages %q, want one naming the step, the field and $<<sin_result>>", retries)
	}
}

// Seed 003's own examples behave as it says.
//
// What it proves: with the seed's figures (source quality 0.95 from a
// knowledge-base tool, lead context, no tool used yet), a pricing question
// is answered with high confidence whether the model takes the seed's
// RETRIEVE or plans the knowledge-base call; "Thanks, that helps!" after
// the session's tools all failed is answered from the conversation, not
// escalated; and a plan whose step fails when it runs escalates with the
// step named. The model's answers are scripted.
func TestSeed003Examples(t *testing.T) {
	kb := []Tool{{Name: "kb_search", Description: "Search the knowledge base: pricing, policies, SOPs.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"query":{"type":"string"}},"required":["query"]}`), Score: 0.95}}
	lead := "Lead: Acme Corp, 12 seats, on the Starter trial."
	pricing := "What's your Starter plan pricing?"
	for _, tc := range []struct {
		name, answer string
		req          Request
		want, level  string
	}{
		{"pricing, the seed's RETRIEVE", `{"decision":"RETRIEVE","confidence":0.9,"reasoning":"A pricing fact from the knowledge base."}`,
			Request{Query: pricing, Context: lead, Tools: kb, SuccessRate: -1}, Retrieve, High},
		{"pricing, a plan of the knowledge-base tool",
			`{"decision":"USE_TOOL","confidence":0.9,"reasoning":"r","plan":{"steps":[{"id":"k","tool":"kb_search","args":{"query":"Starter plan pricing"}}]}}`,
			Request{Query: pricing, Context: lead, Tools: kb, SuccessRate: -1}, UseTool, High},
		{"thanks after every tool failed", `{"decision":"REASON_ONLY","confidence":0.95,"reasoning":"The user is thanking us."}`,
			Request{Query: "Thanks, that helps!", Context: "The divide tool failed twice; I explained the error.", SuccessRate: 0}, ReasonOnly, Medium},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, p := newFakePlanner(t, fakeollama.Options{Chat: script(tc.answer)}, Options{})
			d := p.Decide(t.Context(), tc.req)
			if d.Decision != tc.want || d.Level != tc.level || !d.Success {
				t.Errorf("got %s %q at %.3f (%s, success %v, factors %v), want %s at level %s",
					d.Decision, d.EscalationReason, d.Confidence, d.Level, d.Success, d.Factors, tc.want, tc.level)
			}
		})
	}

	t.Run("a failed tool step escalates", func(t *testing.T) {
		_, p := newFakePlanner(t, fakeollama.Options{Chat: script(parallelAnswer)}, Options{})
		d := p.Decide(t.Context(), Request{Query: "What is 5 factorial and 16 squared?", Tools: calcTools(), SuccessRate: -1})
		if d.Decision != UseTool || !d.Success {
			t.Fatalf("got %s (success %v), want a USE_TOOL success", d.Decision, d.Success)
		}
		if got := p.AfterRun(d, nil); got.Decision != UseTool || !got.Success {
			t.Errorf("no step failed: got %s (success %v), want the decision unchanged", got.Decision, got.Success)
		}
		got := p.AfterRun(d, []StepFailure{{Step: "q", Tool: "calculator_square", Error: "overflow"}})
		want := ReasonToolFailure + ": step q (calculator_square): overflow"
		if got.Decision != Escalate || got.EscalationReason != want || got.Success || got.Plan != nil || got.Strategy != NoTool {
			t.Errorf("got %s %q (success %v, plan %s, strategy %s), want ESCALATE %q, no success, no plan",
				got.Decision, got.EscalationReason, got.Success, got.Plan, got.Strategy, want)
		}
		if got.Confidence > 0.35 || got.Level != Low || got.Factors[FactorToolSuccessRate] != 0.5 || got.Query != d.Query {
			t.Errorf("got confidence %.3f, level %s, tool_success_rate %v, query %q; want at most 0.35, low, 0.5, the query",
				got.Confidence, got.Level, got.Factors[FactorToolSuccessRate], got.Query)
		}
		if d.Factors[FactorToolSuccessRate] != 1 {
			t.Errorf("AfterRun changed the original decision's factors: %v", d.Factors)
		}
	})

	t.Run("the fallback is no success and keeps the query", func(t *testing.T) {
		d := New(Options{}).Decide(t.Context(), Request{Query: pricing, Tools: kb})
		if d.Success || !d.Fallback || d.Query != pricing {
			t.Errorf("got success %v, fallback %v, query %q; want no success, the fallback, the query", d.Success, d.Fallback, d.Query)
		}
	})
}
