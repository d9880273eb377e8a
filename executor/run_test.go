package executor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestRunIndependentStepsRunTogether(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e, f := newTest(Options{PerUpstream: 16})
		var steps []Step
		for i := range 16 {
			steps = append(steps, sleepStep(fmt.Sprintf("s%d", i), "sleep", 50))
		}
		start := time.Now()
		res, err := e.Run(t.Context(), &Plan{Steps: steps}, nil)
		elapsed := time.Since(start)
		if err != nil {
			t.Fatal(err)
		}
		if elapsed >= 400*time.Millisecond {
			t.Errorf("16 × 50 ms took %v, want well under 800 ms", elapsed)
		}
		if res.Strategy != ParallelTools {
			t.Errorf("got strategy %s, want %s", res.Strategy, ParallelTools)
		}
		for _, s := range res.Steps {
			if s.Status != Succeeded {
				t.Errorf("step %s: got %s, want succeeded", s.ID, s.Status)
			}
		}
		if got := f.peak("a"); got != 16 {
			t.Errorf("got %d calls at once, want 16", got)
		}
	})
}

func TestRunStartsAStepWhenItsLastDependencyEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e, f := newTest(Options{})
		plan := &Plan{Steps: []Step{
			sleepStep("fast", "sleep", 10),
			sleepStep("slow", "sleep", 100),
			sleepStep("after_fast", "sleep", 11, "fast"),
		}}
		if _, err := e.Run(t.Context(), plan, nil); err != nil {
			t.Fatal(err)
		}
		starts := map[float64]time.Duration{}
		for _, c := range f.received() {
			starts[c.Args["ms"].(float64)] = c.Start
		}
		want := map[float64]time.Duration{10: 0, 100: 0, 11: 10 * time.Millisecond} // not at 100ms, when the wave ends
		if diff := cmp.Diff(want, starts); diff != "" {
			t.Errorf("start times by ms (-want +got):\n%s", diff)
		}
	})
}

func TestRunPassesValuesWithTheirType(t *testing.T) {
	tests := []struct {
		name string
		arg  any
		want any
	}{
		{name: "number stays number", arg: "$<<s.total>>", want: 2.0},
		{name: "object stays object", arg: "$<<s.meta>>", want: map[string]any{"took_ms": 3.0, "source": "fake"}},
		{name: "array index path", arg: "$<<s.items.1.place_id>>", want: "p2"},
		{name: "whole array", arg: "$<<s.items>>", want: []any{
			map[string]any{"place_id": "p1", "rating": 4.5}, map[string]any{"place_id": "p2", "rating": 3.9}}},
		{name: "ref object with a pointer", arg: map[string]any{"$ref": "s", "path": "/items/0/rating"}, want: 4.5},
		{name: "ref object without a path", arg: map[string]any{"$ref": "s"}, want: searchResult2()},
		{name: "interpolated into text", arg: "top: $<<s.items.0.place_id>> of $<<s.total>> for $<<s.query>>", want: "top: p1 of 2 for pizza"},
		{name: "object interpolated as compact JSON", arg: "meta=$<<s.meta>>", want: `meta={"source":"fake","took_ms":3}`},
		{name: "nested in arrays and objects", arg: []any{map[string]any{"n": "$<<s.total>>"}, "$<<s.query>>"},
			want: []any{map[string]any{"n": 2.0}, "pizza"}},
		{name: "text result parsed as JSON", arg: "$<<t.a.1>>", want: 2.0},
		{name: "plain text result", arg: "$<<p>>", want: "just words"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, f := newTest(Options{})
			plan := &Plan{Steps: []Step{
				step("s", "search", nil),
				step("t", "text", map[string]any{"text": `{"a":[1,2]}`}),
				step("p", "text", map[string]any{"text": "just words"}),
				step("use", "echo", map[string]any{"value": tt.arg}),
			}}
			res, err := e.Run(t.Context(), plan, nil)
			if err != nil {
				t.Fatal(err)
			}
			if s := stepByID(t, res, "use"); s.Status != Succeeded {
				t.Fatalf("got %s (%s), want succeeded", s.Status, s.Error)
			}
			got := f.callsOf("echo")
			if len(got) != 1 {
				t.Fatalf("got %d echo calls, want 1", len(got))
			}
			if diff := cmp.Diff(tt.want, got[0]["value"]); diff != "" {
				t.Errorf("echo received (-want +got):\n%s", diff)
			}
		})
	}
}

// searchResult2 is searchResult as it comes back over the wire.
func searchResult2() any {
	data, _ := json.Marshal(searchResult)
	var v any
	_ = json.Unmarshal(data, &v)
	return v
}

func TestRunResultValueKeepsJSONType(t *testing.T) {
	e, _ := newTest(Options{})
	res, err := e.Run(t.Context(), &Plan{Steps: []Step{step("s", "search", nil)}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(res.Steps[0].Result)
	want, _ := json.Marshal(searchResult)
	if string(got) != string(want) {
		t.Errorf("got %s, want %s", got, want)
	}
}

// TestRunLiteralTextIsNotAReference is BI-16 in docs/reliability.md, first half.
func TestRunLiteralTextIsNotAReference(t *testing.T) {
	tests := []struct {
		name string
		arg  string
		want string
	}{
		{name: "dollar number", arg: "costs $5", want: "costs $5"},
		{name: "hash E1", arg: "#E1 then $E1", want: "#E1 then $E1"},
		{name: "lone $<", arg: "a $< b", want: "a $< b"},
		{name: "unclosed $<<", arg: "x $<<a", want: "x $<<a"},
		{name: "escaped $$<<", arg: "$$<<a>> stays", want: "$<<a>> stays"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, f := newTest(Options{})
			g, err := e.Validate(&Plan{Steps: []Step{step("a", "echo", map[string]any{"value": 1}), step("b", "echo", map[string]any{"value": tt.arg})}})
			if err != nil {
				t.Fatal(err)
			}
			if g.Strategy != ParallelTools {
				t.Errorf("got strategy %s, want %s: literal text made a dependency", g.Strategy, ParallelTools)
			}
			if _, err := e.Run(t.Context(), &Plan{Steps: []Step{step("b", "echo", map[string]any{"value": tt.arg})}}, nil); err != nil {
				t.Fatal(err)
			}
			if got := f.callsOf("echo")[0]["value"]; got != tt.want {
				t.Errorf("echo received %q, want %q", got, tt.want)
			}
		})
	}
}

// TestRunResultsAreNeverScannedAgain is BI-16 in docs/reliability.md, second half.
func TestRunResultsAreNeverScannedAgain(t *testing.T) {
	e, f := newTest(Options{})
	injected := "$<<secret>> and $<<a./x>> and $$<<b>>"
	plan := &Plan{Steps: []Step{
		step("secret", "echo", map[string]any{"value": "do not leak"}),
		step("t", "text", map[string]any{"text": "$$<<secret>> and $$<<a./x>> and $$$<<b>>"}), // escaped, so the tool returns injected
		step("whole", "echo", map[string]any{"value": "$<<t>>"}),
		step("inner", "echo", map[string]any{"value": "got: $<<t>>"}),
	}}
	res, err := e.Run(t.Context(), plan, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := res.Err(); err != nil {
		t.Fatal(err)
	}
	echoes := f.callsOf("echo")
	got := map[string]bool{}
	for _, a := range echoes {
		got[fmt.Sprint(a["value"])] = true
	}
	for _, want := range []string{injected, "got: " + injected} {
		if !got[want] {
			t.Errorf("echo calls %v, want one with %q verbatim", echoes, want)
		}
	}
}

func TestRunS1IsNotS11(t *testing.T) {
	e, f := newTest(Options{})
	plan := &Plan{Steps: []Step{
		step("s1", "echo", map[string]any{"value": "one"}),
		step("s11", "echo", map[string]any{"value": "eleven"}),
		step("s2", "echo", map[string]any{"value": "$<<s11.value>>/$<<s1.value>>/$<<s11>>"}),
	}}
	g, err := e.Validate(plan)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([][]string{{"s1", "s11"}, {"s2"}}, g.Waves); diff != "" {
		t.Errorf("waves (-want +got):\n%s", diff)
	}
	if _, err := e.Run(t.Context(), plan, nil); err != nil {
		t.Fatal(err)
	}
	echoes := f.callsOf("echo")
	if got, want := echoes[len(echoes)-1]["value"], `eleven/one/{"value":"eleven"}`; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestRunMissingPathAtRunTime(t *testing.T) {
	e, f := newTest(Options{})
	plan := &Plan{OnError: Continue, Steps: []Step{
		step("t", "text", map[string]any{"text": `{"items":[{"id":7}]}`}),
		step("key", "echo", map[string]any{"value": "$<<t.item>>"}),
		step("idx", "echo", map[string]any{"value": "$<<t.items.3.id>>"}),
		step("bracket", "echo", map[string]any{"value": "$<<t.items[0]>>"}),
		step("ok", "echo", map[string]any{"value": "$<<t.items.0.id>>"}),
	}}
	res, err := e.Run(t.Context(), plan, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"key":     `args.value: $<<t.item>>: at the value: no key "item" (it has items)`,
		"idx":     `args.value: $<<t.items.3.id>>: at items: index 3 out of range (array of 1)`,
		"bracket": `args.value: $<<t.items[0]>>: at the value: no key "items[0]" (it has items); indices are dotted: items.0, not items[0]`,
	}
	for id, msg := range want {
		if s := stepByID(t, res, id); s.Status != Failed || s.Error != msg {
			t.Errorf("step %s: got %s %q, want failed %q", id, s.Status, s.Error, msg)
		}
	}
	if s := stepByID(t, res, "ok"); s.Status != Succeeded {
		t.Errorf("step ok: got %s (%s), want succeeded", s.Status, s.Error)
	}
	if n := len(f.callsOf("echo")); n != 1 {
		t.Errorf("got %d echo calls, want 1: a step with a missing path must not call its tool", n)
	}
}

func TestRunChecksFilledInArgsAgainstTheInputSchema(t *testing.T) {
	e, f := newTest(Options{})
	plan := &Plan{Steps: []Step{
		step("t", "text", map[string]any{"text": "not a number"}),
		step("sum", "add", map[string]any{"a": "$<<t>>", "b": 1}),
	}}
	res, err := e.Run(t.Context(), plan, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := stepByID(t, res, "sum")
	if s.Status != Failed || s.Error != "args.a: got string, want number (input schema of add)" {
		t.Errorf("got %s %q, want failed on the input schema", s.Status, s.Error)
	}
	if n := len(f.callsOf("add")); n != 0 {
		t.Errorf("got %d add calls, want 0", n)
	}
}

func TestRunOnError(t *testing.T) {
	// a and slow are independent of the failure; dep and dep2 depend on it.
	plan := func(onError, failing string) *Plan {
		return &Plan{OnError: onError, Steps: []Step{
			sleepStep("a", "sleep", 10),
			sleepStep("slow", "sleep", 1000),
			sleepStep("bad_wait", "sleep", 50),
			step("bad", failing, nil, "bad_wait"),
			step("dep", "echo", map[string]any{"value": "$<<bad>>"}),
			step("dep2", "echo", map[string]any{"value": "$<<dep.value>>"}),
			sleepStep("later", "sleep", 10, "slow"),
		}}
	}
	tests := []struct {
		name, onError, failing string
		want                   map[string]Status
		badErr                 string
	}{
		{
			name: "fail_fast on an unreachable upstream", onError: "", failing: "boom",
			want: map[string]Status{"a": Succeeded, "slow": Cancelled, "bad_wait": Succeeded, "bad": Failed,
				"dep": Skipped, "dep2": Skipped, "later": Skipped},
			badErr: "boom: connection refused",
		},
		{
			name: "fail_fast on a tool error", onError: FailFast, failing: "fail",
			want: map[string]Status{"a": Succeeded, "slow": Cancelled, "bad_wait": Succeeded, "bad": Failed,
				"dep": Skipped, "dep2": Skipped, "later": Skipped},
			badErr: "fail: it broke",
		},
		{
			name: "continue on an unreachable upstream", onError: Continue, failing: "boom",
			want: map[string]Status{"a": Succeeded, "slow": Succeeded, "bad_wait": Succeeded, "bad": Failed,
				"dep": Skipped, "dep2": Skipped, "later": Succeeded},
			badErr: "boom: connection refused",
		},
		{
			name: "continue on a tool error", onError: Continue, failing: "fail",
			want: map[string]Status{"a": Succeeded, "slow": Succeeded, "bad_wait": Succeeded, "bad": Failed,
				"dep": Skipped, "dep2": Skipped, "later": Succeeded},
			badErr: "fail: it broke",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e, f := newTest(Options{})
				start := time.Now()
				res, err := e.Run(t.Context(), plan(tt.onError, tt.failing), nil)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(tt.want, statuses(res)); diff != "" {
					t.Errorf("statuses (-want +got):\n%s", diff)
				}
				if got := stepByID(t, res, "bad").Error; got != tt.badErr {
					t.Errorf("got error %q, want %q", got, tt.badErr)
				}
				if got := stepByID(t, res, "dep").Error; got != `not run: it depends on "bad", which failed` && tt.onError == Continue {
					t.Errorf("dep: got error %q", got)
				}
				if n := len(f.callsOf("echo")); n != 0 {
					t.Errorf("got %d echo calls, want none: a failure must not flow into dependants", n)
				}
				var serr *StepError
				if err := res.Err(); !errors.As(err, &serr) || serr.Step != "bad" {
					t.Errorf("Result.Err: got %v, want a *StepError for bad", err)
				}
				if tt.onError != Continue {
					if got := stepByID(t, res, "slow").Error; got != `cancelled: step "bad" failed` {
						t.Errorf("slow: got error %q", got)
					}
					for _, id := range []string{"dep", "dep2", "later"} {
						if got := stepByID(t, res, id).Error; got != `not run: step "bad" failed` {
							t.Errorf("%s: got error %q", id, got)
						}
					}
					if d := time.Since(start); d != 50*time.Millisecond {
						t.Errorf("fail_fast returned after %v, want 50ms", d)
					}
					for _, c := range f.received() {
						if c.Args["ms"] == 1000.0 && c.Ended != context.Canceled.Error() {
							t.Errorf("slow ended %q, want its ctx cancelled", c.Ended)
						}
					}
				}
			})
		})
	}
}

// TestRunUpstreamCrashInHybridPlan is FI-22 in docs/reliability.md.
func TestRunUpstreamCrashInHybridPlan(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e, f := newTest(Options{})
		plan := &Plan{Steps: []Step{
			sleepStep("s1", "sleep", 10_000),
			step("s2", "boom", nil),
			step("s3", "echo", map[string]any{"value": "$<<s2>>"}),
		}}
		start := time.Now()
		res, err := e.Run(t.Context(), plan, nil)
		if err != nil {
			t.Fatal(err)
		}
		if time.Since(start) != 0 {
			t.Errorf("returned after %v, want at once", time.Since(start))
		}
		want := map[string]Status{"s1": Cancelled, "s2": Failed, "s3": Skipped}
		if res.Strategy != HybridTools || !cmp.Equal(want, statuses(res)) {
			t.Errorf("got %s %v, want %s %v", res.Strategy, statuses(res), HybridTools, want)
		}
		if n := len(f.received()); n != 2 {
			t.Errorf("got %d calls, want 2", n)
		}
	})
}

func TestRunStepTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e, f := newTest(Options{StepTimeout: time.Second})
		plan := &Plan{OnError: Continue, Steps: []Step{
			{ID: "h", Tool: "hang", TimeoutMS: 100},
			step("after", "echo", map[string]any{"value": 1}, "h"),
			{ID: "default", Tool: "hang"},
			sleepStep("fine", "sleep", 300),
		}}
		start := time.Now()
		res, err := e.Run(t.Context(), plan, nil)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]Status{"h": TimedOut, "after": Skipped, "default": TimedOut, "fine": Succeeded}
		if diff := cmp.Diff(want, statuses(res)); diff != "" {
			t.Errorf("statuses (-want +got):\n%s", diff)
		}
		h := stepByID(t, res, "h")
		if h.Error != "timed out after 100ms" || h.DurationMS != 100 {
			t.Errorf("h: got %q after %vms, want timed out after 100ms", h.Error, h.DurationMS)
		}
		if d := time.Since(start); d != time.Second {
			t.Errorf("plan took %v, want 1s (the default step timeout)", d)
		}
		for _, c := range f.received() {
			if c.Tool == "hang" && c.Ended != context.DeadlineExceeded.Error() {
				t.Errorf("hang ended %q, want its ctx past its deadline", c.Ended)
			}
		}
		if !errors.Is(res.Err(), ErrStepTimeout) {
			t.Errorf("Result.Err: got %v, want ErrStepTimeout", res.Err())
		}
	})
}

func TestRunCapsTimeouts(t *testing.T) {
	tests := []struct {
		name string
		opts Options
		plan *Plan
		want Status
		at   time.Duration
	}{
		{
			name: "timeout_ms above MaxStepTimeout", opts: Options{MaxStepTimeout: 200 * time.Millisecond},
			plan: &Plan{Steps: []Step{{ID: "h", Tool: "hang", TimeoutMS: 60_000}}}, want: TimedOut, at: 200 * time.Millisecond,
		},
		{
			name: "deadline_ms above MaxDeadline", opts: Options{MaxDeadline: 300 * time.Millisecond},
			plan: &Plan{DeadlineMS: 10_000, Steps: []Step{{ID: "h", Tool: "hang"}}}, want: Cancelled, at: 300 * time.Millisecond,
		},
		{
			name: "no deadline_ms is MaxDeadline", opts: Options{MaxDeadline: 300 * time.Millisecond},
			plan: &Plan{Steps: []Step{{ID: "h", Tool: "hang"}}}, want: Cancelled, at: 300 * time.Millisecond,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e, _ := newTest(tt.opts)
				start := time.Now()
				res, err := e.Run(t.Context(), tt.plan, nil)
				if err != nil {
					t.Fatal(err)
				}
				if got, d := res.Steps[0].Status, time.Since(start); got != tt.want || d != tt.at {
					t.Errorf("got %s after %v, want %s after %v", got, d, tt.want, tt.at)
				}
			})
		})
	}
}

func TestRunPlanDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e, f := newTest(Options{})
		plan := &Plan{DeadlineMS: 100, Steps: []Step{
			sleepStep("quick", "sleep", 10),
			{ID: "h", Tool: "hang"},
			step("after", "echo", map[string]any{"value": 1}, "h"),
		}}
		start := time.Now()
		res, err := e.Run(t.Context(), plan, nil)
		if err != nil {
			t.Fatalf("got %v, want no error: the plan's own deadline is in the result", err)
		}
		if d := time.Since(start); d != 100*time.Millisecond {
			t.Errorf("returned after %v, want 100ms", d)
		}
		want := map[string]Status{"quick": Succeeded, "h": Cancelled, "after": Skipped}
		if diff := cmp.Diff(want, statuses(res)); diff != "" {
			t.Errorf("statuses (-want +got):\n%s", diff)
		}
		if got := stepByID(t, res, "h").Error; got != "cancelled: plan deadline exceeded" {
			t.Errorf("h: got error %q", got)
		}
		if got := stepByID(t, res, "after").Error; got != "not run: plan deadline exceeded" {
			t.Errorf("after: got error %q", got)
		}
		if n := len(f.callsOf("echo")); n != 0 {
			t.Errorf("got %d echo calls, want none", n)
		}
	})
}

func TestRunClientCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e, f := newTest(Options{})
		plan := &Plan{Steps: []Step{
			sleepStep("first", "sleep", 10),
			sleepStep("long", "sleep", 5000),
			{ID: "h", Tool: "hang"},
			sleepStep("next", "sleep", 10, "long"),
		}}
		ctx, cancel := context.WithCancel(t.Context())
		time.AfterFunc(100*time.Millisecond, cancel)
		start := time.Now()
		res, err := e.Run(ctx, plan, nil)
		if !errors.Is(err, context.Canceled) {
			t.Errorf("got %v, want context.Canceled", err)
		}
		if d := time.Since(start); d != 100*time.Millisecond {
			t.Errorf("returned after %v, want at once on cancel (100ms)", d)
		}
		want := map[string]Status{"first": Succeeded, "long": Cancelled, "h": Cancelled, "next": Skipped}
		if diff := cmp.Diff(want, statuses(res)); diff != "" {
			t.Errorf("statuses (-want +got):\n%s", diff)
		}
		for _, c := range f.received() {
			if c.Args["ms"] != 10.0 && c.Ended != context.Canceled.Error() {
				t.Errorf("%s ended %q, want cancelled", c.Tool, c.Ended)
			}
		}
		if got := stepByID(t, res, "long").Error; got != "cancelled: the caller stopped the plan (context canceled)" {
			t.Errorf("long: got error %q", got)
		}
		if got := stepByID(t, res, "next").Error; got != "not run: the caller stopped the plan (context canceled)" {
			t.Errorf("next: got error %q", got)
		}
	})
}

func TestRunCancelledBeforeStartCallsNothing(t *testing.T) {
	e, f := newTest(Options{})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	res, err := e.Run(ctx, &Plan{Steps: []Step{step("a", "echo", map[string]any{"value": 1})}}, nil)
	if !errors.Is(err, context.Canceled) || res.Steps[0].Status != Skipped {
		t.Errorf("got %v and %s, want context.Canceled and skipped", err, res.Steps[0].Status)
	}
	if len(f.received()) != 0 {
		t.Errorf("got calls, want none")
	}
}

func TestRunConcurrencyLimits(t *testing.T) {
	tests := []struct {
		name         string
		opts         Options
		maxParallel  int
		wantA, wantB int // peak calls per upstream
		wantTotal    int
	}{
		{name: "per upstream", opts: Options{PerUpstream: 3}, wantA: 3, wantB: 3, wantTotal: 6},
		{name: "plan max_parallel below the cap", opts: Options{PerUpstream: 8}, maxParallel: 5, wantA: 5, wantB: 5, wantTotal: 5},
		{name: "plan max_parallel above the cap", opts: Options{MaxParallel: 4, PerUpstream: 8}, maxParallel: 100, wantA: 4, wantB: 4, wantTotal: 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e, f := newTest(tt.opts)
				var steps []Step
				for i := range 20 {
					steps = append(steps, sleepStep(fmt.Sprintf("a%d", i), "count_a", 10), sleepStep(fmt.Sprintf("b%d", i), "count_b", 10))
				}
				res, err := e.Run(t.Context(), &Plan{Steps: steps, MaxParallel: tt.maxParallel}, nil)
				if err != nil {
					t.Fatal(err)
				}
				if err := res.Err(); err != nil {
					t.Fatal(err)
				}
				f.mu.Lock()
				total := f.maxTotal
				f.mu.Unlock()
				if a, b := f.peak("a"), f.peak("b"); a > tt.wantA || b > tt.wantB || total > tt.wantTotal {
					t.Errorf("peaks a=%d b=%d total=%d, want at most %d, %d, %d", a, b, total, tt.wantA, tt.wantB, tt.wantTotal)
				}
				if total != tt.wantTotal {
					t.Errorf("peak total %d, want the limit %d reached", total, tt.wantTotal)
				}
			})
		})
	}
}

func TestRunBusyUpstreamDoesNotHoldUpOthers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e, f := newTest(Options{PerUpstream: 1})
		plan := &Plan{Steps: []Step{
			sleepStep("a1", "count_a", 100), sleepStep("a2", "count_a", 100), sleepStep("b1", "count_b", 10),
		}}
		if _, err := e.Run(t.Context(), plan, nil); err != nil {
			t.Fatal(err)
		}
		for _, c := range f.received() {
			if c.Tool == "count_b" && c.Start != 0 {
				t.Errorf("b1 started at %v, want at once while upstream a is busy", c.Start)
			}
		}
	})
}

func TestRunForeach(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e, f := newTest(Options{ForeachWidth: 2})
		plan := &Plan{Steps: []Step{
			step("list", "text", map[string]any{"text": `[40, 10, 30, 20, 10]`}),
			{ID: "each", Tool: "sleep", Foreach: "$<<list>>", Args: map[string]any{"ms": "$<<item>>", "i": "$<<index>>"}},
			{ID: "label", Tool: "echo", Foreach: map[string]any{"$ref": "each"}, Args: map[string]any{"value": "#$<<index>>: $<<item.slept>>"}},
			{ID: "none", Tool: "echo", Foreach: "$<<empty>>", Args: map[string]any{"value": "$<<item>>"}},
			step("empty", "text", map[string]any{"text": `[]`}),
		}}
		res, err := e.Run(t.Context(), plan, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := res.Err(); err != nil {
			t.Fatal(err)
		}
		wantEach := []any{
			map[string]any{"slept": json.Number("40")}, map[string]any{"slept": json.Number("10")},
			map[string]any{"slept": json.Number("30")}, map[string]any{"slept": json.Number("20")},
			map[string]any{"slept": json.Number("10")},
		}
		if diff := cmp.Diff(wantEach, stepByID(t, res, "each").Result); diff != "" {
			t.Errorf("each: values in element order (-want +got):\n%s", diff)
		}
		wantLabels := []any{
			map[string]any{"value": "#0: 40"}, map[string]any{"value": "#1: 10"}, map[string]any{"value": "#2: 30"},
			map[string]any{"value": "#3: 20"}, map[string]any{"value": "#4: 10"},
		}
		if diff := cmp.Diff(wantLabels, stepByID(t, res, "label").Result); diff != "" {
			t.Errorf("label (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]any{}, stepByID(t, res, "none").Result); diff != "" {
			t.Errorf("foreach over an empty array (-want +got):\n%s", diff)
		}
		// Width 2 over 40, 10, 30, 20, 10 ms: 0 and 1 at once, 2 when 1 ends, 3 and 4 when 0 and 2 end.
		starts := map[float64]time.Duration{}
		for _, c := range f.received() {
			if c.Tool == "sleep" {
				starts[c.Args["i"].(float64)] = c.Start
			}
		}
		wantStarts := map[float64]time.Duration{0: 0, 1: 0, 2: 10 * time.Millisecond, 3: 40 * time.Millisecond, 4: 40 * time.Millisecond}
		if diff := cmp.Diff(wantStarts, starts); diff != "" {
			t.Errorf("element start times (-want +got):\n%s", diff)
		}
		if got := f.peak("a"); got != 2 {
			t.Errorf("peak %d calls at once, want the foreach width 2", got)
		}
		if got := stepByID(t, res, "each").DurationMS; got != 60 {
			t.Errorf("each took %vms, want 60ms with two at a time", got)
		}
	})
}

func TestRunForeachElementFailureFailsTheStep(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e, f := newTest(Options{ForeachWidth: 2})
		plan := &Plan{OnError: Continue, Steps: []Step{
			step("list", "text", map[string]any{"text": `[{"ms": 500}, {"ms": "x"}, {"ms": 5}, {"ms": 5}]`}),
			{ID: "each", Tool: "sleep", Foreach: "$<<list>>", Args: map[string]any{"ms": "$<<item.ms>>"}},
			step("notarray", "text", map[string]any{"text": `{"a": 1}`}),
			{ID: "bad", Tool: "echo", Foreach: "$<<notarray>>", Args: map[string]any{"value": "$<<item>>"}},
		}}
		res, err := e.Run(t.Context(), plan, nil)
		if err != nil {
			t.Fatal(err)
		}
		each := stepByID(t, res, "each")
		if each.Status != Failed || each.Error != "element 1: args.ms: got string, want integer (input schema of sleep)" {
			t.Errorf("each: got %s %q", each.Status, each.Error)
		}
		calls := f.callsOf("sleep")
		if len(calls) != 1 {
			t.Errorf("got %d sleep calls, want 1: no element starts after one fails", len(calls))
		}
		for _, c := range f.received() {
			if c.Tool == "sleep" && c.End != 0 {
				t.Errorf("the running element ended at %v, want at once (cancelled)", c.End)
			}
		}
		if bad := stepByID(t, res, "bad"); bad.Status != Failed || bad.Error != "foreach: $<<notarray>> is an object, not an array" {
			t.Errorf("bad: got %s %q", bad.Status, bad.Error)
		}
	})
}

func TestRunDryRun(t *testing.T) {
	e, f := newTest(Options{})
	res, err := e.Run(t.Context(), &Plan{DryRun: true, Steps: []Step{
		step("a", "echo", map[string]any{"value": 1}),
		step("b", "echo", map[string]any{"value": "$<<a.value>>"}),
	}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := &Result{
		Strategy: SequentialTools, Waves: [][]string{{"a"}, {"b"}}, DryRun: true,
		Steps: []StepResult{{ID: "a", Tool: "echo", Status: Skipped}, {ID: "b", Tool: "echo", Status: Skipped}},
	}
	if diff := cmp.Diff(want, res, cmp.AllowUnexported(Result{}), cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".errs" }, cmp.Ignore())); diff != "" {
		t.Errorf("result (-want +got):\n%s", diff)
	}
	if len(f.received()) != 0 {
		t.Error("dry_run made calls")
	}
}

func TestRunOutput(t *testing.T) {
	e, _ := newTest(Options{})
	plan := &Plan{OnError: Continue, Steps: []Step{
		step("s", "search", nil),
		step("e", "echo", map[string]any{"value": "hi"}),
		step("f", "fail", nil),
		step("t", "text", map[string]any{"text": `{"a": 1}`}),
	}, Output: map[string]any{
		"total":  "$<<s.total>>",
		"top":    map[string]any{"$ref": "s", "path": "/items/0/place_id"},
		"msg":    "said $<<e.value>>",
		"failed": "$<<f>>",
		"absent": "$<<t.b>>",
		"lit":    []any{1, "$$<<x>>"},
	}}
	res, err := e.Run(t.Context(), plan, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"total": json.Number("2"), "top": "p1", "msg": "said hi", "failed": nil, "absent": nil,
		"lit": []any{json.Number("1"), "$<<x>>"},
	}
	if diff := cmp.Diff(want, res.Output); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
	wantErrs := []string{
		`output.absent: $<<t.b>>: at the value: no key "b" (it has a)`,
		`output.failed: $<<f>>: step "f" failed`,
	}
	if diff := cmp.Diff(wantErrs, res.OutputErrors); diff != "" {
		t.Errorf("output errors (-want +got):\n%s", diff)
	}
}

func TestRunStepsInPlanOrderWithProgress(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e, _ := newTest(Options{})
		plan := &Plan{Steps: []Step{
			sleepStep("c", "sleep", 30), sleepStep("b", "sleep", 20), sleepStep("a", "sleep", 10), sleepStep("d", "sleep", 1, "a"),
		}}
		var mu sync.Mutex
		var progress [][2]int
		res, err := e.Run(t.Context(), plan, func(done, total int) {
			mu.Lock()
			defer mu.Unlock()
			progress = append(progress, [2]int{done, total})
		})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, s := range res.Steps {
			ids = append(ids, s.ID)
		}
		if diff := cmp.Diff([]string{"c", "b", "a", "d"}, ids); diff != "" {
			t.Errorf("step order (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([][2]int{{1, 4}, {2, 4}, {3, 4}, {4, 4}}, progress); diff != "" {
			t.Errorf("progress (-want +got):\n%s", diff)
		}
		if got := stepByID(t, res, "c").DurationMS; got != 30 {
			t.Errorf("c took %vms, want 30", got)
		}
	})
}

func TestRunRecoversFromACallerPanic(t *testing.T) {
	e, _ := newTest(Options{})
	res, err := e.Run(t.Context(), &Plan{OnError: Continue, Steps: []Step{
		step("p", "panic", nil),
		step("after", "echo", map[string]any{"value": "$<<p>>"}),
		step("ok", "echo", map[string]any{"value": 1}),
	}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Status{"p": Failed, "after": Skipped, "ok": Succeeded}
	if diff := cmp.Diff(want, statuses(res)); diff != "" {
		t.Errorf("statuses (-want +got):\n%s", diff)
	}
	if got := stepByID(t, res, "p").Error; got != "internal error" {
		t.Errorf("got error %q, want internal error", got)
	}
}

func TestRunEmptyPlan(t *testing.T) {
	e, _ := newTest(Options{})
	res, err := e.Run(t.Context(), &Plan{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Strategy != NoTool || len(res.Steps) != 0 {
		t.Errorf("got %s with %d steps, want NO_TOOL and none", res.Strategy, len(res.Steps))
	}
	data, _ := json.Marshal(res)
	if want := `{"strategy":"NO_TOOL","waves":[],"steps":[]}`; string(data) != want {
		t.Errorf("got %s, want %s", data, want)
	}
}

func TestResultJSON(t *testing.T) {
	e, _ := newTest(Options{})
	res, err := e.Run(t.Context(), &Plan{Steps: []Step{step("a", "echo", map[string]any{"value": 1})}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res.Steps[0].DurationMS = 1.5
	data, _ := json.Marshal(res)
	want := `{"strategy":"SINGLE_TOOL","waves":[["a"]],"steps":[{"id":"a","tool":"echo","status":"succeeded","result":{"value":1},"duration_ms":1.5}]}`
	if string(data) != want {
		t.Errorf("got %s, want %s", data, want)
	}
	if !strings.Contains(string(data), `"result":{"value":1}`) {
		t.Error("result value missing")
	}
}

func TestRunLogsStepsButNeverArguments(t *testing.T) {
	var buf strings.Builder
	var mu sync.Mutex
	log := slog.New(slog.NewTextHandler(writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return buf.Write(p)
	}), &slog.HandlerOptions{Level: slog.LevelDebug}))
	e, _ := newTest(Options{Logger: log})
	_, err := e.Run(t.Context(), &Plan{OnError: Continue, Steps: []Step{
		step("a", "echo", map[string]any{"value": "hunter2-secret"}),
		step("p", "panic", nil),
	}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	out := buf.String()
	mu.Unlock()
	for _, want := range []string{"msg=\"step done\"", "plan_id=", "step=a", "tool=echo", "dur=", "msg=\"step panicked\"", "level=ERROR", "msg=\"plan done\""} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "hunter2") {
		t.Errorf("log shows an argument value:\n%s", out)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
