package planner

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestStrategy(t *testing.T) {
	for _, tc := range []struct {
		name, plan, want string
	}{
		{"absent", ``, NoTool},
		{"null", `null`, NoTool},
		{"one step", `{"steps":[{"id":"a","tool":"t","args":{}}]}`, SingleTool},
		{"independent steps", `{"steps":[{"id":"a","tool":"t","args":{}},{"id":"b","tool":"t","args":{}}]}`, ParallelTools},
		{"chain by depends_on", `{"steps":[{"id":"a","tool":"t","args":{}},{"id":"b","tool":"t","args":{},"depends_on":["a"]}]}`, SequentialTools},
		{"chain by reference", `{"steps":[{"id":"a","tool":"t","args":{}},{"id":"b","tool":"t","args":{"x":"$<<a.result>>"}}]}`, SequentialTools},
		{"reference inside text, listed later", `{"steps":[{"id":"b","tool":"t","args":{"x":["got $<<a.items[0]>> units"]}},{"id":"a","tool":"t","args":{}}]}`, SequentialTools},
		{"whole-result reference", `{"steps":[{"id":"a","tool":"t","args":{}},{"id":"b","tool":"t","args":{"x":"$<<a>>"}}]}`, SequentialTools},
		{"chain with a shortcut edge", `{"steps":[{"id":"a","tool":"t","args":{}},{"id":"b","tool":"t","args":{},"depends_on":["a"]},{"id":"c","tool":"t","args":{"x":"$<<a.r>>"},"depends_on":["b"]}]}`, SequentialTools},
		{"fan-out then join", `{"steps":[{"id":"a","tool":"t","args":{}},{"id":"b","tool":"t","args":{}},{"id":"c","tool":"t","args":{"x":"$<<a.r>>","y":"$<<b.r>>"}}]}`, HybridTools},
		{"one step with foreach", `{"steps":[{"id":"a","tool":"t","args":{"x":"$<<item>>"},"foreach":[1,2]}]}`, SingleTool},
		{"chain into a foreach", `{"steps":[{"id":"a","tool":"t","args":{}},{"id":"b","tool":"t","args":{},"foreach":"$<<a.items>>"}]}`, SequentialTools},
		{"$ref object", `{"steps":[{"id":"a","tool":"t","args":{}},{"id":"b","tool":"t","args":{"x":{"$ref":"a","path":"/r.s"}}}]}`, SequentialTools},
		{"JSON Schema $ref is literal", `{"steps":[{"id":"a","tool":"t","args":{}},{"id":"b","tool":"t","args":{"s":{"$ref":"a","type":"object","x":1}}}]}`, ParallelTools},
		{"escaped reference", `{"steps":[{"id":"a","tool":"t","args":{}},{"id":"b","tool":"t","args":{"x":"$$<<a.r>>"}}]}`, ParallelTools},
		{"unclosed reference", `{"steps":[{"id":"a","tool":"t","args":{}},{"id":"b","tool":"t","args":{"x":"$<<a.r and more"}}]}`, ParallelTools},
		{"escaped then real", `{"steps":[{"id":"a","tool":"t","args":{}},{"id":"b","tool":"t","args":{"x":"$$<<a>> is $<<a.r>>"}}]}`, SequentialTools},
		{"literal dollars are no reference", `{"steps":[{"id":"a","tool":"t","args":{}},{"id":"b","tool":"t","args":{"x":"$5, $<<a and #E1"}}]}`, ParallelTools},
		{"reference to an unknown step", `{"steps":[{"id":"a","tool":"t","args":{}},{"id":"b","tool":"t","args":{"x":"$<<zz.r>>"}}]}`, ParallelTools},
		{"self reference", `{"steps":[{"id":"a","tool":"t","args":{"x":"$<<a.r>>"}}]}`, SingleTool},
		{"reference in a key is not one", `{"steps":[{"id":"a","tool":"t","args":{}},{"id":"b","tool":"t","args":{"$<<a.r>>":1}}]}`, ParallelTools},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := strategyOf(json.RawMessage(tc.plan))
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
}

func TestStrategyErrors(t *testing.T) {
	for _, tc := range []struct {
		name, plan, want string
	}{
		{"cycle", `{"steps":[{"id":"a","tool":"t","depends_on":["b"]},{"id":"b","tool":"t","args":{"x":"$<<a.r>>"}}]}`, "cycle through step"},
		{"array", `[{"id":"a"}]`, "want an object"},
		{"wrong types", `{"steps":[{"id":1}]}`, "plan: json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := strategyOf(json.RawMessage(tc.plan))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an error with %q", err, tc.want)
			}
		})
	}
}

func TestComplexity(t *testing.T) {
	for _, tc := range []struct {
		name string
		g    graph
		want float64
	}{
		{"no plan", graph{}, 0},
		{"one step", graph{steps: 1, depth: 1}, 0},
		{"two parallel", graph{steps: 2, depth: 1}, 0.15},
		{"two chained", graph{steps: 2, depth: 2}, 0.35},
		{"three parallel and a join", graph{steps: 4, depth: 2}, 0.65},
		{"five chained saturate", graph{steps: 5, depth: 5}, 1},
	} {
		if got := tc.g.complexity(); abs(got-tc.want) > 1e-12 {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// strategyOf is the strategy Decide reports for plan, steps of tool "t":
// the one its checked graph gives, NO_TOOL for an answer with no plan.
func strategyOf(plan json.RawMessage) (string, error) {
	if isAbsent(plan) {
		return graph{}.strategy(), nil
	}
	g, err := checkPlan(plan, map[string]bool{"t": true}, anyPlan) // the graph alone, not the executor's checks
	return g.strategy(), err
}

// anyPlan is a Validate that accepts every plan.
func anyPlan(json.RawMessage) error { return nil }
