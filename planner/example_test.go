package planner_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mcp-router/mcp-router/planner"
)

// fixedAnswer is a planner.LLM that always gives the same answer.
type fixedAnswer string

func (a fixedAnswer) Chat(context.Context, string, string, json.RawMessage) (string, error) {
	return string(a), nil
}

func ExamplePlanner_Decide() {
	// In mcp-router the model is an OllamaLLM; here it is a fixed answer.
	model := fixedAnswer(`{"decision":"USE_TOOL","confidence":0.9,"reasoning":"The square needs the sine.",
			"plan":{"steps":[{"id":"s","tool":"calculator_sin","args":{"x":1.57}},
			{"id":"q","tool":"calculator_square","args":{"x":"$<<s.result>>"},"depends_on":["s"]}]}}`)
	p := planner.New(planner.Options{LLM: model})
	d := p.Decide(context.Background(), planner.Request{
		Query: "Take the sine of 1.57, then square it",
		Tools: []planner.Tool{
			{Name: "calculator_sin", Score: 0.8},
			{Name: "calculator_square", Score: 0.9},
		},
		SuccessRate: 1,
	})
	fmt.Println(d.Decision, d.Strategy, d.Level)
	fmt.Printf("%.4f\n", d.Confidence)
	fmt.Println(string(d.Plan))
	// Output:
	// USE_TOOL SEQUENTIAL_TOOLS medium
	// 0.7200
	// {"steps":[{"id":"s","tool":"calculator_sin","args":{"x":1.57}},{"id":"q","tool":"calculator_square","args":{"x":"$<<s.result>>"},"depends_on":["s"]}]}
}
