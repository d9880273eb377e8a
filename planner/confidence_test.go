package planner

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestComposite checks the composite confidence formula on hand-computed cases:
// base = 0.3*source_quality + 0.2*(1-query_complexity)
// + 0.3*context_completeness + 0.2*tool_success_rate, halved on conflict.
// Tool scores: factorial 0.9, square 0.8, sin 0.7, add 0.6, sqrt 0.5,
// web_fetch 0.3, docs_search 0.2.
func TestComposite(t *testing.T) {
	for _, tc := range []struct {
		name    string
		answer  string // the model's answer; "" for none
		context string
		success float64
		tools   []Tool
		// the factors: source_quality, query_complexity,
		// context_completeness, tool_success_rate, conflict
		sq, qc, cc, tsr, conflict float64
		base, want                float64
	}{
		{
			name:   "one well-ranked tool, sure model, no context",
			answer: `{"decision":"USE_TOOL","confidence":0.95,"reasoning":"r","plan":{"steps":[{"id":"f","tool":"calculator_factorial","args":{"x":5}}]}}`,
			// 0.27 + 0.2 + 0.3*0.475 + 0.2
			success: -1, sq: 0.9, qc: 0, cc: 0.475, tsr: 1, base: 0.8125, want: 0.8125,
		},
		{
			name:    "context given, half the session's tools failed",
			answer:  `{"decision":"USE_TOOL","confidence":0.95,"reasoning":"r","plan":{"steps":[{"id":"f","tool":"calculator_factorial","args":{"x":5}}]}}`,
			context: "We are doing homework.",
			// 0.27 + 0.2 + 0.3*0.975 + 0.2*0.5
			success: 0.5, sq: 0.9, qc: 0, cc: 0.975, tsr: 0.5, base: 0.8625, want: 0.8625,
		},
		{
			name:   "every tool of the session failed",
			answer: `{"decision":"USE_TOOL","confidence":0.95,"reasoning":"r","plan":{"steps":[{"id":"f","tool":"calculator_factorial","args":{"x":5}}]}}`,
			// 0.27 + 0.2 + 0.1425 + 0
			success: 0, sq: 0.9, qc: 0, cc: 0.475, tsr: 0, base: 0.6125, want: 0.6125,
		},
		{
			name:   "two-step chain",
			answer: `{"decision":"USE_TOOL","confidence":0.8,"reasoning":"r","plan":{"steps":[{"id":"s","tool":"calculator_sin","args":{"x":1}},{"id":"q","tool":"calculator_square","args":{"x":"$<<s.result>>"}}]}}`,
			// sq (0.7+0.8)/2; qc 0.15*1 + 0.2*1; 0.225 + 0.13 + 0.12 + 0.2
			success: -1, sq: 0.75, qc: 0.35, cc: 0.4, tsr: 1, base: 0.675, want: 0.675,
		},
		{
			name: "fan-out, join, then one more: four steps on three levels",
			answer: `{"decision":"USE_TOOL","confidence":0.7,"reasoning":"r","plan":{"steps":[` +
				`{"id":"f","tool":"calculator_factorial","args":{"x":5}},{"id":"q","tool":"calculator_square","args":{"x":16}},` +
				`{"id":"a","tool":"calculator_add","args":{"a":"$<<f.result>>","b":"$<<q.result>>"}},` +
				`{"id":"r","tool":"calculator_sqrt","args":{"x":"$<<a.result>>"}}]}}`,
			// sq (0.9+0.8+0.6+0.5)/4; qc 0.15*3 + 0.2*2; 0.21 + 0.03 + 0.105 + 0.2
			success: -1, sq: 0.7, qc: 0.85, cc: 0.35, tsr: 1, base: 0.545, want: 0.545,
		},
		{
			name:   "a tool used twice counts once",
			answer: `{"decision":"USE_TOOL","confidence":0.8,"reasoning":"r","plan":{"steps":[{"id":"a","tool":"calculator_square","args":{"x":2}},{"id":"b","tool":"calculator_square","args":{"x":3}},{"id":"c","tool":"calculator_sqrt","args":{"x":4}}]}}`,
			// sq (0.8+0.5)/2; qc 0.3; 0.195 + 0.14 + 0.12 + 0.2
			success: -1, sq: 0.65, qc: 0.3, cc: 0.4, tsr: 1, base: 0.655, want: 0.655,
		},
		{
			name:   "foreach fans one step out",
			answer: `{"decision":"USE_TOOL","confidence":0.8,"reasoning":"r","plan":{"steps":[{"id":"q","tool":"calculator_square","args":{"x":"$<<item>>"},"foreach":[1,2,3]}]}}`,
			// qc 0.1 for the foreach; 0.24 + 0.18 + 0.12 + 0.2
			success: -1, sq: 0.8, qc: 0.1, cc: 0.4, tsr: 1, base: 0.74, want: 0.74,
		},
		{
			name:   "conflict: sure model, poorly ranked tool",
			answer: `{"decision":"USE_TOOL","confidence":0.9,"reasoning":"r","plan":{"steps":[{"id":"s","tool":"docs_search","args":{"query":"q"}}]}}`,
			// 0.06 + 0.2 + 0.135 + 0.2, halved
			success: -1, sq: 0.2, qc: 0, cc: 0.45, tsr: 1, conflict: 1, base: 0.595, want: 0.2975,
		},
		{
			name:   "conflict: unsure model, top-ranked tool",
			answer: `{"decision":"USE_TOOL","confidence":0.3,"reasoning":"r","plan":{"steps":[{"id":"f","tool":"calculator_factorial","args":{"x":5}}]}}`,
			// 0.27 + 0.2 + 0.045 + 0.2, halved
			success: -1, sq: 0.9, qc: 0, cc: 0.15, tsr: 1, conflict: 1, base: 0.715, want: 0.3575,
		},
		{
			name:   "conflict: one plan tool below the router's keep threshold",
			answer: `{"decision":"USE_TOOL","confidence":0.6,"reasoning":"r","plan":{"steps":[{"id":"f","tool":"calculator_factorial","args":{"x":5}},{"id":"w","tool":"web_fetch","args":{"url":"u"}}]}}`,
			// sq (0.9+0.3)/2; qc 0.15; 0.18 + 0.17 + 0.09 + 0.2, halved
			success: -1, sq: 0.6, qc: 0.15, cc: 0.3, tsr: 1, conflict: 1, base: 0.64, want: 0.32,
		},
		{
			name:    "reason only, no candidates",
			answer:  `{"decision":"REASON_ONLY","confidence":0.9,"reasoning":"r"}`,
			context: "We added numbers.",
			tools:   []Tool{},
			// 0 + 0.2 + 0.285 + 0.2
			success: -1, sq: 0, qc: 0, cc: 0.95, tsr: 1, base: 0.685, want: 0.685,
		},
		{
			name:   "conflict: sure of reason only, but the router rates a tool high",
			answer: `{"decision":"REASON_ONLY","confidence":0.9,"reasoning":"r"}`,
			// best candidate 0.9; 0.27 + 0.2 + 0.135 + 0.2, halved
			success: -1, sq: 0.9, qc: 0, cc: 0.45, tsr: 1, conflict: 1, base: 0.805, want: 0.4025,
		},
		{
			name:   "retrieve, no strong candidate",
			answer: `{"decision":"RETRIEVE","confidence":0.8,"reasoning":"r"}`,
			tools:  []Tool{{Name: "web_fetch", Score: 0.3}},
			// 0.09 + 0.2 + 0.12 + 0.2
			success: -1, sq: 0.3, qc: 0, cc: 0.4, tsr: 1, base: 0.61, want: 0.61,
		},
		{
			name:    "no answer: best candidate, context only",
			context: "ctx",
			// 0.27 + 0.2 + 0.15 + 0.2
			success: -1, sq: 0.9, qc: 0, cc: 0.5, tsr: 1, base: 0.82, want: 0.82,
		},
		{
			name: "success rate out of range is clamped or unknown",
			// 0.27 + 0.2 + 0 + 0.2
			success: math.NaN(), sq: 0.9, qc: 0, cc: 0, tsr: 1, base: 0.67, want: 0.67,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tools := tc.tools
			if tools == nil {
				tools = calcTools()
			}
			req := Request{Query: "q", Context: tc.context, Tools: tools, SuccessRate: tc.success}
			var a *answer
			if tc.answer != "" {
				parsed, err := parseAnswer(tc.answer, offeredNames(tools), anyPlan) // the formula, not the checks
				if err != nil {
					t.Fatal(err)
				}
				a = &parsed
			}
			got, factors := composite(req, a, thresholds{high: 0.75, low: 0.5})
			want := map[string]float64{
				FactorSourceQuality: tc.sq, FactorQueryComplexity: tc.qc, FactorContextCompleteness: tc.cc,
				FactorToolSuccessRate: tc.tsr, FactorConflict: tc.conflict, FactorBase: tc.base,
			}
			if diff := cmp.Diff(want, factors, approx); diff != "" {
				t.Errorf("factors (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want, got, approx); diff != "" {
				t.Errorf("confidence (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLevels(t *testing.T) {
	thr := thresholds{high: 0.75, low: 0.5}
	for _, tc := range []struct {
		c    float64
		want string
	}{{1, High}, {0.75, High}, {0.7499, Medium}, {0.5, Medium}, {0.4999, Low}, {0, Low}} {
		if got := thr.level(tc.c); got != tc.want {
			t.Errorf("level(%v): got %s, want %s", tc.c, got, tc.want)
		}
	}
	if got := thr.escalateCap(); math.Abs(got-0.35) > 1e-12 {
		t.Errorf("escalation cap: got %v, want 0.35", got)
	}
}
