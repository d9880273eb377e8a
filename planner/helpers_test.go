package planner

import (
	"encoding/json"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/mcp-router/mcp-router/internal/fakeollama"
)

// numberSchema is the input schema of a one-number calculator tool.
const numberSchema = `{"type": "object", "properties": {"x": {"type": "number"}}, "required": ["x"]}`

// twoNumbers is the input schema of a two-number calculator tool.
const twoNumbers = `{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"]}`

// calcTools are the router's candidates in most tests, with their scores.
func calcTools() []Tool {
	return []Tool{
		{Name: "calculator_factorial", Description: "Return n! for a whole number x.", InputSchema: json.RawMessage(numberSchema), Score: 0.9},
		{Name: "calculator_square", Description: "Square x.", InputSchema: json.RawMessage(numberSchema), Score: 0.8},
		{Name: "calculator_sin", Description: "Sine of x radians.", InputSchema: json.RawMessage(numberSchema), Score: 0.7},
		{Name: "calculator_add", Description: "Add a and b.", InputSchema: json.RawMessage(twoNumbers), Score: 0.6},
		{Name: "calculator_sqrt", Description: "Square root of x.", InputSchema: json.RawMessage(numberSchema), Score: 0.5},
		{Name: "web_fetch", Description: "Fetch a URL as text.", InputSchema: json.RawMessage(`{"type":"object","properties":{"url":{"type":"string"}}}`), Score: 0.3},
		{Name: "docs_search", Description: "Search documents.", InputSchema: json.RawMessage(`{"type":"object","properties":{"query":{"type":"string"}}}`), Score: 0.2},
	}
}

func offeredNames(tools []Tool) map[string]bool {
	m := map[string]bool{}
	for _, t := range tools {
		m[t.Name] = true
	}
	return m
}

// Model answers used across tests.
const (
	parallelPlan   = `{"steps":[{"id":"f","tool":"calculator_factorial","args":{"x":5}},{"id":"q","tool":"calculator_square","args":{"x":16}}]}`
	parallelAnswer = `{"decision":"USE_TOOL","confidence":0.9,"reasoning":"Two independent calculations.","plan":` + parallelPlan + `}`
)

// approx compares floats to 1e-9, for hand-computed confidences.
var approx = cmpopts.EquateApprox(0, 1e-9)

// newFakePlanner starts a fake Ollama with fopts and returns it with a
// planner that talks to it through OllamaLLM. Both close when the test
// ends.
func newFakePlanner(t *testing.T, fopts fakeollama.Options, opts Options) (*fakeollama.Server, *Planner) {
	t.Helper()
	srv := fakeollama.New(fopts)
	t.Cleanup(srv.Close)
	llm, err := NewOllamaLLM(OllamaOptions{URL: srv.URL(), Model: "qwen3:4b", HTTPClient: srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	opts.LLM = llm
	return srv, New(opts)
}

// script answers the fake's chat calls in order, repeating the last.
func script(answers ...string) func(fakeollama.ChatRequest) (string, error) {
	var (
		mu sync.Mutex
		n  int
	)
	return func(fakeollama.ChatRequest) (string, error) {
		mu.Lock()
		defer mu.Unlock()
		a := answers[min(n, len(answers)-1)]
		n++
		return a, nil
	}
}

func lastUser(req fakeollama.ChatRequest) string {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == "user" {
			return req.Messages[i].Content
		}
	}
	return ""
}

func diffJSON(t *testing.T, want, got json.RawMessage) {
	t.Helper()
	var w, g any
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatalf("want %s: %v", want, err)
	}
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("got %s: %v", got, err)
	}
	if diff := cmp.Diff(w, g); diff != "" {
		t.Errorf("JSON (-want +got):\n%s", diff)
	}
}
