package executor

import (
	"errors"
	"strings"
	"testing"
)

// runBound runs plan under opts and returns the result of step id.
func runBound(t *testing.T, opts Options, plan *Plan, id string) (StepResult, *Result, *fakeCaller) {
	t.Helper()
	e, f := newTest(opts)
	res, err := e.Run(t.Context(), plan, nil)
	if err != nil {
		t.Fatal(err)
	}
	return stepByID(t, res, id), res, f
}

// wantLimit checks that step failed on a plan limit, with a message that
// holds each of want.
func wantLimit(t *testing.T, res *Result, s StepResult, want ...string) {
	t.Helper()
	if s.Status != Failed {
		t.Fatalf("step %s: got %s, want failed on the limit", s.ID, s.Status)
	}
	var se *StepError
	if err := res.Err(); !errors.As(err, &se) || se.Step != s.ID || !errors.Is(se.Err, ErrLimit) {
		t.Errorf("got error %v, want ErrLimit for step %s", res.Err(), s.ID)
	}
	for _, w := range want {
		if !strings.Contains(s.Error, w) {
			t.Errorf("step %s: error %q does not say %q", s.ID, s.Error, w)
		}
	}
}

func foreachPlan(n int) *Plan {
	return &Plan{Steps: []Step{
		step("list", "text", map[string]any{"text": "[" + strings.TrimSuffix(strings.Repeat("1,", n), ",") + "]"}),
		{ID: "each", Tool: "echo", Foreach: "$<<list>>", Args: map[string]any{"value": "$<<item>>"}},
	}}
}

func TestBoundPlanForeachItems(t *testing.T) {
	const n = 5
	if s, _, _ := runBound(t, Options{MaxForeachItems: n}, foreachPlan(n), "each"); s.Status != Succeeded {
		t.Errorf("%d elements at the limit %d: got %s (%s), want succeeded", n, n, s.Status, s.Error)
	}
	s, res, f := runBound(t, Options{MaxForeachItems: n - 1}, foreachPlan(n), "each")
	wantLimit(t, res, s, "foreach: $<<list>>", "5 elements, more than 4")
	if got := len(f.callsOf("echo")); got != 0 {
		t.Errorf("%d elements called, want none", got)
	}
}

func TestBoundPlanCalls(t *testing.T) {
	const n = 5 // the list, then n elements
	if s, _, _ := runBound(t, Options{MaxCalls: n + 1}, foreachPlan(n), "each"); s.Status != Succeeded {
		t.Errorf("%d calls at the limit: got %s (%s), want succeeded", n+1, s.Status, s.Error)
	}
	s, res, f := runBound(t, Options{MaxCalls: n}, foreachPlan(n), "each")
	wantLimit(t, res, s, "more than 5 calls")
	if got := len(f.callsOf("echo")); got != 0 {
		t.Errorf("%d elements called, want none", got)
	}
}

// textPlan interpolates a 100-byte result twice into one string of 201.
func textPlan() *Plan {
	return &Plan{Steps: []Step{
		step("big", "text", map[string]any{"text": strings.Repeat("x", 100)}),
		step("t", "text", map[string]any{"text": "$<<big>>-$<<big>>"}),
	}}
}

func TestBoundPlanInterpolatedText(t *testing.T) {
	if s, _, _ := runBound(t, Options{MaxTextBytes: 201}, textPlan(), "t"); s.Status != Succeeded {
		t.Errorf("201 bytes at the limit: got %s (%s), want succeeded", s.Status, s.Error)
	}
	s, res, f := runBound(t, Options{MaxTextBytes: 200}, textPlan(), "t")
	wantLimit(t, res, s, "args.text", "interpolated text over 200 bytes")
	if got := len(f.callsOf("text")); got != 1 {
		t.Errorf("%d calls of text, want only the first", got)
	}
}

// expandPlan puts a 1000-byte result ten times, whole, into one call.
func expandPlan() *Plan {
	refs := make([]any, 10)
	for i := range refs {
		refs[i] = "$<<big>>"
	}
	return &Plan{Steps: []Step{
		step("big", "text", map[string]any{"text": strings.Repeat("x", 1000)}),
		step("many", "echo", map[string]any{"value": refs}),
	}}
}

func TestBoundPlanExpandedArguments(t *testing.T) {
	big := map[string]any{"text": strings.Repeat("x", 1000)}
	many := map[string]any{"value": []any{}}
	for range 10 {
		many["value"] = append(many["value"].([]any), strings.Repeat("x", 1000))
	}
	total := jsonSize(big, 1<<30) + jsonSize(many, 1<<30)
	if total < 11000 {
		t.Fatalf("size %d, want at least the 11000 bytes of text", total)
	}
	if s, _, _ := runBound(t, Options{MaxExpandedBytes: total}, expandPlan(), "many"); s.Status != Succeeded {
		t.Errorf("%d bytes at the limit: got %s (%s), want succeeded", total, s.Status, s.Error)
	}
	s, res, f := runBound(t, Options{MaxExpandedBytes: total - 1}, expandPlan(), "many")
	wantLimit(t, res, s, "references filled in", "limit of")
	if got := len(f.callsOf("echo")); got != 0 {
		t.Errorf("the expanded call was made %d times, want never", got)
	}
}

func TestBoundPlanResult(t *testing.T) {
	_, whole, _ := runBound(t, Options{}, expandPlan(), "many")
	size := 0
	for _, s := range whole.Steps {
		size += jsonSize(s.Result, 1<<30)
	}
	if s, _, _ := runBound(t, Options{MaxResultBytes: size}, expandPlan(), "many"); s.Status != Succeeded {
		t.Errorf("%d bytes of results at the limit: got %s (%s), want succeeded", size, s.Status, s.Error)
	}
	s, res, _ := runBound(t, Options{MaxResultBytes: size - 1}, expandPlan(), "many")
	wantLimit(t, res, s, "results over")
	if s.Result != nil {
		t.Errorf("the value over the limit was kept")
	}
	// The output is bounded too: each string in it (that part is null),
	// and its whole size (it is left out).
	p := expandPlan()
	p.Output = map[string]any{"many": "$<<many>>", "twice": "$<<big>>$<<big>>"}
	_, res, _ = runBound(t, Options{MaxTextBytes: 1500}, p, "many")
	out, _ := res.Output.(map[string]any)
	if out == nil || out["twice"] != nil || out["many"] == nil || len(res.OutputErrors) != 1 ||
		!strings.Contains(res.OutputErrors[0], "output.twice: plan limit: interpolated text over 1500 bytes") {
		t.Errorf("got errors %q; want output.twice null for the text limit, the rest kept", res.OutputErrors)
	}
	p.Output = []any{"$<<many>>", "$<<many>>"}
	_, res, _ = runBound(t, Options{MaxResultBytes: size}, p, "many")
	if res.Output != nil || len(res.OutputErrors) != 1 || !strings.Contains(res.OutputErrors[0], "the output over") {
		t.Errorf("got errors %q; want no output, over the result limit", res.OutputErrors)
	}
}

// TestBoundPlanSizeIsBounded: the size of a value is counted only up to
// the limit, however large the value.
func TestBoundPlanSizeIsBounded(t *testing.T) {
	v := []any{strings.Repeat("x", 100)}
	for range 40 { // 2^40 strings, if it were walked whole
		v = []any{v, v}
	}
	if got := jsonSize(v, 1<<20); got != 1<<20+1 {
		t.Errorf("got %d, want the limit plus one", got)
	}
}
