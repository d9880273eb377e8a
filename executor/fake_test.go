package executor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// fakeTools is the catalog of the fake upstreams "a" and "b".
var fakeTools = map[string]ToolInfo{
	// sleep{ms}: waits ms, honouring ctx.
	"sleep": {Upstream: "a", InputSchema: json.RawMessage(`{"type":"object","properties":{"ms":{"type":"integer"}},"required":["ms"]}`)},
	// echo{value}: returns structuredContent {"value": value}.
	"echo": {Upstream: "a",
		InputSchema:  json.RawMessage(`{"type":"object","properties":{"value":{}},"required":["value"],"additionalProperties":false}`),
		OutputSchema: json.RawMessage(`{"type":"object","properties":{"value":{}},"additionalProperties":false}`)},
	// text{text}: returns only text content.
	"text": {Upstream: "b", InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`)},
	// fail{}: a tool that ran and failed.
	"fail": {Upstream: "b"},
	// boom{}: the upstream cannot be reached.
	"boom": {Upstream: "b"},
	// hang{}: blocks until ctx is done.
	"hang": {Upstream: "a"},
	// panic{}: a Caller with a bug.
	"panic": {Upstream: "a"},
	// count_a and count_b{ms}: wait ms; every tool's concurrency per upstream is tracked.
	"count_a": {Upstream: "a"},
	"count_b": {Upstream: "b"},
	// search{}: a fixed structured result, with an output schema.
	"search": {Upstream: "b", OutputSchema: json.RawMessage(`{
		"type": "object",
		"properties": {
			"total": {"type": "integer"},
			"query": {"type": "string"},
			"meta": {"type": "object"},
			"items": {"type": "array", "items": {"type": "object", "properties": {
				"place_id": {"type": "string"}, "rating": {"type": "number"}}}}
		},
		"additionalProperties": false
	}`)},
	// add{a, b}: numbers only.
	"add": {Upstream: "a",
		InputSchema:  json.RawMessage(`{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"]}`),
		OutputSchema: json.RawMessage(`{"type":"object","properties":{"sum":{"type":"number"}}}`)},
}

var searchResult = map[string]any{
	"total": 2,
	"query": "pizza",
	"meta":  map[string]any{"took_ms": 3, "source": "fake"},
	"items": []any{
		map[string]any{"place_id": "p1", "rating": 4.5},
		map[string]any{"place_id": "p2", "rating": 3.9},
	},
}

// call is one call the fake received, with its args as the wire carried them.
type call struct {
	Tool  string
	Args  map[string]any
	Start time.Duration // since the fake was made
	End   time.Duration
	Ended string // "ok", or why it stopped: the ctx error
}

// fakeCaller is the Caller of the tests: the tools above, on two upstreams.
type fakeCaller struct {
	born time.Time

	mu       sync.Mutex
	calls    []call
	running  map[string]int
	maxUp    map[string]int
	total    int
	maxTotal int
}

func newFake() *fakeCaller {
	return &fakeCaller{born: time.Now(), running: map[string]int{}, maxUp: map[string]int{}}
}

func (f *fakeCaller) lookup(name string) (ToolInfo, bool) {
	t, ok := fakeTools[name]
	t.Name = name
	return t, ok
}

func (f *fakeCaller) CallTool(ctx context.Context, name string, args any) (*mcp.CallToolResult, error) {
	info, ok := f.lookup(name)
	if !ok {
		return nil, fmt.Errorf("no tool %q", name)
	}
	data, err := json.Marshal(args) // as the wire would
	if err != nil {
		return nil, err
	}
	var a map[string]any
	if err := json.Unmarshal(data, &a); err != nil {
		return nil, err
	}
	n := f.begin(name, info.Upstream, a)
	res, err := f.do(ctx, name, a)
	ended := "ok"
	if ctx.Err() != nil {
		ended = ctx.Err().Error()
	}
	f.end(n, info.Upstream, ended)
	return res, err
}

func (f *fakeCaller) do(ctx context.Context, name string, a map[string]any) (*mcp.CallToolResult, error) {
	switch name {
	case "sleep", "count_a", "count_b":
		ms, _ := a["ms"].(float64)
		t := time.NewTimer(time.Duration(ms) * time.Millisecond)
		defer t.Stop()
		select {
		case <-t.C:
			return mcp.NewToolResultStructuredOnly(map[string]any{"slept": ms}), nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	case "echo":
		return mcp.NewToolResultStructuredOnly(map[string]any{"value": a["value"]}), nil
	case "text":
		return mcp.NewToolResultText(fmt.Sprint(a["text"])), nil
	case "fail":
		return mcp.NewToolResultError("fail: it broke"), nil
	case "boom":
		return nil, errors.New("boom: connection refused")
	case "hang":
		<-ctx.Done()
		return nil, ctx.Err()
	case "panic":
		panic("fake caller bug")
	case "search":
		return mcp.NewToolResultStructuredOnly(searchResult), nil
	case "add":
		x, _ := a["a"].(float64)
		y, _ := a["b"].(float64)
		return mcp.NewToolResultStructuredOnly(map[string]any{"sum": x + y}), nil
	}
	return nil, fmt.Errorf("no tool %q", name)
}

func (f *fakeCaller) begin(name, upstream string, a map[string]any) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.running[upstream]++
	f.maxUp[upstream] = max(f.maxUp[upstream], f.running[upstream])
	f.total++
	f.maxTotal = max(f.maxTotal, f.total)
	f.calls = append(f.calls, call{Tool: name, Args: a, Start: time.Since(f.born)})
	return len(f.calls) - 1
}

func (f *fakeCaller) end(n int, upstream, ended string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.running[upstream]--
	f.total--
	f.calls[n].End = time.Since(f.born)
	f.calls[n].Ended = ended
}

// received returns the calls made so far.
func (f *fakeCaller) received() []call {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.calls)
}

// callsOf returns the args of every call of one tool, in call order.
func (f *fakeCaller) callsOf(tool string) []map[string]any {
	var out []map[string]any
	for _, c := range f.received() {
		if c.Tool == tool {
			out = append(out, c.Args)
		}
	}
	return out
}

func (f *fakeCaller) peak(upstream string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.maxUp[upstream]
}

// newTest returns an executor over a fresh fake, with opts' limits.
func newTest(opts Options) (*Executor, *fakeCaller) {
	f := newFake()
	opts.Caller, opts.Lookup = f, f.lookup
	return New(opts), f
}

// statuses maps step ids to statuses.
func statuses(r *Result) map[string]Status {
	m := map[string]Status{}
	for _, s := range r.Steps {
		m[s.ID] = s.Status
	}
	return m
}

// step is a short way to write a Step.
func step(id, tool string, args map[string]any, deps ...string) Step {
	return Step{ID: id, Tool: tool, Args: args, DependsOn: deps}
}

// sleepStep is a step of tool (sleep, count_a, count_b) waiting ms.
func sleepStep(id, tool string, ms int, deps ...string) Step {
	return step(id, tool, map[string]any{"ms": ms}, deps...)
}

// stepByID finds a step's result.
func stepByID(t *testing.T, r *Result, id string) StepResult {
	t.Helper()
	for _, s := range r.Steps {
		if s.ID == id {
			return s
		}
	}
	t.Fatalf("no step %q in result", id)
	return StepResult{}
}
