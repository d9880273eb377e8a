package executor

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestValidateProblems covers BI-15 in docs/reliability.md: every
// problem reported with its step and path, and zero calls made.
func TestValidateProblems(t *testing.T) {
	tests := []struct {
		name string
		plan Plan
		opts Options
		want []string // every problem, as Problem.String writes it
	}{
		{
			name: "unknown step in a reference, with the argument's path",
			plan: Plan{Steps: []Step{
				step("search", "search", nil),
				step("b", "echo", map[string]any{"value": map[string]any{"query": "$<<serch.query>>"}}),
			}},
			want: []string{`step "b": args.value.query: reference to unknown step "serch"`},
		},
		{
			name: "the seeds' ${{var}} syntax, refused with the step, the field and our syntax",
			plan: Plan{Steps: []Step{
				step("sin_result", "echo", map[string]any{"value": 1.57}),
				step("q", "echo", map[string]any{"value": "${{sin_result}}"}),
			}},
			want: []string{`step "q": args.value: "${{sin_result}}" is not this gateway's reference syntax: write "$<<sin_result>>" for the value of step "sin_result" (or "$${{" for a literal "${{")`},
		},
		{
			name: "cycle with its path",
			plan: Plan{Steps: []Step{
				step("a", "echo", map[string]any{"value": "$<<c.value>>"}),
				step("b", "echo", map[string]any{"value": "$<<a.value>>"}),
				step("c", "echo", map[string]any{"value": "$<<b.value>>"}),
			}},
			want: []string{`step "a": cycle: a -> b -> c -> a`},
		},
		{
			name: "cycle through depends_on",
			plan: Plan{Steps: []Step{
				step("x", "echo", map[string]any{"value": 1}, "y"),
				step("y", "echo", map[string]any{"value": 1}, "x"),
			}},
			want: []string{`step "x": cycle: x -> y -> x`},
		},
		{
			name: "duplicate, bad, missing and reserved ids",
			plan: Plan{Steps: []Step{
				step("a", "echo", map[string]any{"value": 1}),
				step("a", "echo", map[string]any{"value": 2}),
				step("1x", "echo", map[string]any{"value": 3}),
				step("", "echo", map[string]any{"value": 4}),
				step("item", "echo", map[string]any{"value": 5}),
			}},
			want: []string{
				`steps[1].id: duplicate id "a" (also steps[0])`,
				`steps[2].id: "1x" is not a valid id (letters, digits, _ and -, not starting with a digit, at most 64)`,
				`steps[3].id: missing`,
				`steps[4].id: "item" is reserved for foreach elements`,
			},
		},
		{
			name: "unknown tool",
			plan: Plan{Steps: []Step{step("a", "serach", nil)}},
			want: []string{`step "a": tool: the catalog has no tool "serach"`},
		},
		{
			name: "self reference and self dependency",
			plan: Plan{Steps: []Step{step("a", "echo", map[string]any{"value": "$<<a.value>>"}, "a")}},
			want: []string{
				`step "a": args.value: $<<a.value>>: a step cannot refer to itself`,
				`step "a": depends_on[0]: a step cannot depend on itself`,
			},
		},
		{
			name: "paths that cannot exist in the producer's output schema",
			plan: Plan{Steps: []Step{
				step("s", "search", nil),
				step("b", "echo", map[string]any{"value": []any{
					"$<<s.totl>>",
					"$<<s.items.first>>",
					"$<<s.total.x>>",
					"$<<s.items.0.place_id>>", // fine
					"$<<s.meta.anything>>",    // fine: meta declares no properties
				}}),
			}},
			want: []string{
				`step "b": args.value[0]: $<<s.totl>> cannot exist in the output schema of "s" (tool search): at the value: no property "totl" (the schema allows items, meta, query, total)`,
				`step "b": args.value[1]: $<<s.items.first>> cannot exist in the output schema of "s" (tool search): at items: "first" is not an array index`,
				`step "b": args.value[2]: $<<s.total.x>> cannot exist in the output schema of "s" (tool search): at total: cannot take "x" of integer`,
			},
		},
		{
			name: "literal arguments against the input schema",
			plan: Plan{Steps: []Step{
				step("a", "add", map[string]any{"a": "one", "b": 2}),
				step("b", "add", map[string]any{"a": 1}),
				step("c", "echo", map[string]any{"value": 1, "extra": true}),
			}},
			want: []string{
				`step "a": args.a: got string, want number (input schema of add)`,
				`step "b": args: missing property 'b' (input schema of add)`,
				`step "c": args: additional properties 'extra' not allowed (input schema of echo)`,
			},
		},
		{
			name: "references stand for any value but required is still honoured",
			plan: Plan{Steps: []Step{
				step("t", "text", map[string]any{"text": "x"}),
				step("a", "add", map[string]any{"a": "$<<t>>", "b": "$<<t.n>>"}), // fine: checked at run time
				step("b", "add", map[string]any{"a": "$<<t>>"}),
			}},
			want: []string{`step "b": args: missing property 'b' (input schema of add)`},
		},
		{
			name: "declared types that cannot meet",
			plan: Plan{Steps: []Step{
				step("s", "search", nil),
				step("a", "add", map[string]any{"a": "$<<s.query>>", "b": "$<<s.total>>"}),
				step("b", "add", map[string]any{"a": "n=$<<s.total>>", "b": 1}),
			}},
			want: []string{
				`step "a": args.a: $<<s.query>> is string in its producer's output schema, but tool add wants number`,
				`step "b": args.a: $<<s.total>> is interpolated into text, but tool add wants number`,
			},
		},
		{
			name: "malformed reference",
			plan: Plan{Steps: []Step{step("a", "echo", map[string]any{"value": "use $<<a b>> here"})}},
			want: []string{`step "a": args.value: "$<<a b>>" is not a reference: "a b" is not a step id (write $$<< for a literal $<<)`},
		},
		{
			name: "plan limits",
			plan: Plan{OnError: "abort", DeadlineMS: -1, MaxParallel: -2, Steps: []Step{
				{ID: "a", Tool: "echo", Args: map[string]any{"value": strings.Repeat("x", 100)}, TimeoutMS: -5},
			}},
			opts: Options{MaxArgBytes: 64},
			want: []string{
				`on_error: "abort" is neither "fail_fast" nor "continue"`,
				`deadline_ms: negative (-1)`,
				`max_parallel: negative (-2)`,
				`step "a": timeout_ms: negative (-5)`,
				`step "a": args: 112 bytes of JSON, more than the limit of 64`,
			},
		},
		{
			name: "too many steps",
			plan: Plan{Steps: []Step{step("a", "echo", nil), step("b", "echo", nil), step("c", "echo", nil)}},
			opts: Options{MaxSteps: 2},
			want: []string{`steps: 3 steps, more than the limit of 2`},
		},
		{
			name: "foreach must reference an array",
			plan: Plan{Steps: []Step{
				step("s", "search", nil),
				{ID: "a", Tool: "echo", Args: map[string]any{"value": "$<<item>>"}, Foreach: []any{1, 2}},
				{ID: "b", Tool: "echo", Args: map[string]any{"value": "$<<item>>"}, Foreach: "$<<s.meta>>"},
				{ID: "c", Tool: "echo", Args: map[string]any{"value": "$<<item.place_id>>"}, Foreach: "$<<s.items>>"}, // fine
				{ID: "d", Tool: "echo", Args: map[string]any{"value": "$<<item.place_id.x>>"}, Foreach: map[string]any{"$ref": "s", "path": "/items"}},
				step("e", "echo", map[string]any{"value": "$<<index>>"}),
			}},
			want: []string{
				`step "a": foreach: must be one reference to an array, like "$<<list>>"`,
				`step "b": foreach: $<<s.meta>> is object in "s"'s output schema, not an array`,
				`step "d": args.value: $<<item.place_id.x>> cannot exist in the foreach array's elements: at place_id: cannot take "x" of string`,
				`step "e": args.value: $<<index>> is only defined in a foreach step`,
			},
		},
		{
			name: "unknown dependency and unknown step in output",
			plan: Plan{
				Steps:  []Step{step("a", "echo", map[string]any{"value": 1}, "zz")},
				Output: map[string]any{"x": "$<<nope>>"},
			},
			want: []string{
				`step "a": depends_on[0]: unknown step "zz"`,
				`output.x: reference to unknown step "nope"`,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, f := newTest(tt.opts)
			_, err := e.Validate(&tt.plan)
			var verr *ValidationError
			if !errors.As(err, &verr) {
				t.Fatalf("got %v, want a *ValidationError", err)
			}
			var got []string
			for _, p := range verr.Problems {
				got = append(got, p.String())
			}
			if diff := cmp.Diff(tt.want, got, cmp.Comparer(problemMatch)); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
			// Run refuses the same plan without calling anything.
			res, err := e.Run(context.Background(), &tt.plan, nil)
			if !errors.As(err, &verr) || res != nil {
				t.Errorf("Run: got %v, %v; want nil and a *ValidationError", res, err)
			}
			if calls := f.received(); len(calls) != 0 {
				t.Errorf("got %d calls, want none", len(calls))
			}
		})
	}
}

// problemMatch lets a wanted problem be the start of the one reported.
func problemMatch(a, b string) bool {
	return strings.HasPrefix(a, b) || strings.HasPrefix(b, a)
}

func TestValidationErrorText(t *testing.T) {
	e, _ := newTest(Options{})
	_, err := e.Validate(&Plan{Steps: []Step{step("a", "x", nil), step("b", "echo", map[string]any{"value": "$<<serch>>"})}})
	want := "invalid plan, 2 problems:\n" +
		`step "a": tool: the catalog has no tool "x"` + "\n" +
		`step "b": args.value: reference to unknown step "serch"`
	if err == nil || err.Error() != want {
		t.Errorf("got %q, want %q", err, want)
	}
}

func TestValidateNeedsCatalog(t *testing.T) {
	_, err := New(Options{}).Validate(&Plan{})
	if !errors.Is(err, errNoCatalog) {
		t.Errorf("got %v, want errNoCatalog", err)
	}
}

func TestStrategy(t *testing.T) {
	v := map[string]any{"value": 1}
	ref := func(id string) map[string]any { return map[string]any{"value": "$<<" + id + ".value>>"} }
	tests := []struct {
		name      string
		steps     []Step
		want      Strategy
		wantWaves [][]string
	}{
		{name: "no step", want: NoTool, wantWaves: [][]string{}},
		{name: "one step", steps: []Step{step("a", "echo", v)}, want: SingleTool, wantWaves: [][]string{{"a"}}},
		{
			name:      "independent steps",
			steps:     []Step{step("a", "echo", v), step("b", "echo", v), step("c", "echo", v)},
			want:      ParallelTools,
			wantWaves: [][]string{{"a", "b", "c"}},
		},
		{
			name:      "a chain through every step, in any plan order",
			steps:     []Step{step("c", "echo", ref("b")), step("a", "echo", v), step("b", "echo", ref("a"))},
			want:      SequentialTools,
			wantWaves: [][]string{{"a"}, {"b"}, {"c"}},
		},
		{
			name:      "a chain with a shortcut edge is still one path",
			steps:     []Step{step("a", "echo", v), step("b", "echo", ref("a")), step("c", "echo", ref("b"), "a")},
			want:      SequentialTools,
			wantWaves: [][]string{{"a"}, {"b"}, {"c"}},
		},
		{
			name:      "diamond",
			steps:     []Step{step("a", "echo", v), step("b", "echo", ref("a")), step("c", "echo", ref("a")), step("d", "echo", v, "b", "c")},
			want:      HybridTools,
			wantWaves: [][]string{{"a"}, {"b", "c"}, {"d"}},
		},
		{
			name:      "a chain beside an independent step",
			steps:     []Step{step("a", "echo", v), step("b", "echo", ref("a")), step("x", "echo", v)},
			want:      HybridTools,
			wantWaves: [][]string{{"a", "x"}, {"b"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, _ := newTest(Options{})
			g, err := e.Validate(&Plan{Steps: tt.steps})
			if err != nil {
				t.Fatal(err)
			}
			if g.Strategy != tt.want {
				t.Errorf("got strategy %s, want %s", g.Strategy, tt.want)
			}
			if diff := cmp.Diff(tt.wantWaves, g.Waves); diff != "" {
				t.Errorf("waves (-want +got):\n%s", diff)
			}
		})
	}
}
