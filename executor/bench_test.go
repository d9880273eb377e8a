package executor

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// timerCaller is an upstream whose every call takes d, on a timer.
type timerCaller struct{ d time.Duration }

func (c timerCaller) CallTool(ctx context.Context, _ string, _ any) (*mcp.CallToolResult, error) {
	t := time.NewTimer(c.d)
	defer t.Stop()
	select {
	case <-t.C:
		return mcp.NewToolResultStructuredOnly(map[string]any{"value": 1}), nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// instantCaller echoes at once, without the wire's JSON round trip, so that
// only the executor's own cost is measured.
type instantCaller struct{}

func (instantCaller) CallTool(_ context.Context, _ string, args any) (*mcp.CallToolResult, error) {
	return &mcp.CallToolResult{StructuredContent: args}, nil
}

func benchLookup(string) (ToolInfo, bool) {
	return ToolInfo{Name: "echo", Upstream: "a",
		InputSchema:  json.RawMessage(`{"type":"object","properties":{"value":{}},"required":["value"]}`),
		OutputSchema: json.RawMessage(`{"type":"object","properties":{"value":{}}}`)}, true
}

// plans of n steps of echo: independent, or a chain where each step uses
// the one before.
func independentPlan(n int) *Plan {
	p := &Plan{}
	for i := range n {
		p.Steps = append(p.Steps, step(fmt.Sprintf("s%d", i), "echo", map[string]any{"value": i}))
	}
	return p
}

func chainPlan(n int) *Plan {
	p := &Plan{Steps: []Step{step("s0", "echo", map[string]any{"value": 0})}}
	for i := 1; i < n; i++ {
		p.Steps = append(p.Steps, step(fmt.Sprintf("s%d", i), "echo", map[string]any{"value": fmt.Sprintf("$<<s%d.value>>", i-1)}))
	}
	return p
}

// BenchmarkFanOut runs 16 independent 50 ms steps, then the same 16 as a
// chain, and reports the speedup of the first over the second.
func BenchmarkFanOut(b *testing.B) {
	const n, d = 16, 50 * time.Millisecond
	e := New(Options{Caller: timerCaller{d}, Lookup: benchLookup, PerUpstream: n})
	par, seq := independentPlan(n), chainPlan(n)
	var parTotal, seqTotal time.Duration
	for b.Loop() {
		for _, run := range []struct {
			p   *Plan
			sum *time.Duration
		}{{par, &parTotal}, {seq, &seqTotal}} {
			start := time.Now()
			res, err := e.Run(b.Context(), run.p, nil)
			*run.sum += time.Since(start)
			if err != nil || res.Err() != nil {
				b.Fatal(err, res.Err())
			}
		}
	}
	b.ReportMetric(float64(parTotal.Milliseconds())/float64(b.N), "parallel-ms/op")
	b.ReportMetric(float64(seqTotal.Milliseconds())/float64(b.N), "sequential-ms/op")
	b.ReportMetric(float64(seqTotal)/float64(parTotal), "speedup")
}

// BenchmarkStepOverhead is the executor's own cost per step (validation
// included) with a tool that answers at once.
func BenchmarkStepOverhead(b *testing.B) {
	const n = 64
	e := New(Options{Caller: instantCaller{}, Lookup: benchLookup})
	for _, bc := range []struct {
		name string
		plan *Plan
	}{{"independent", independentPlan(n)}, {"chain", chainPlan(n)}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				res, err := e.Run(b.Context(), bc.plan, nil)
				if err != nil || res.Err() != nil {
					b.Fatal(err, res.Err())
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/step")
		})
	}
}
