package executor_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-router/mcp-router/executor"
)

// upper is a Caller with one tool: upper{text} returns {"text": TEXT}.
type upper struct{}

func (upper) CallTool(_ context.Context, _ string, args any) (*mcp.CallToolResult, error) {
	text, _ := args.(map[string]any)["text"].(string)
	return mcp.NewToolResultStructuredOnly(map[string]any{"text": strings.ToUpper(text)}), nil
}

func Example() {
	e := executor.New(executor.Options{
		Caller: upper{},
		Lookup: func(name string) (executor.ToolInfo, bool) {
			return executor.ToolInfo{Name: name, Upstream: "demo"}, name == "upper"
		},
	})
	plan, err := executor.Decode([]byte(`{
		"steps": [
			{"id": "greet", "tool": "upper", "args": {"text": "hello"}},
			{"id": "name", "tool": "upper", "args": {"text": "world"}},
			{"id": "both", "tool": "upper", "args": {"text": "$<<greet.text>>, $<<name.text>>! ($$<<literal>>)"}}
		],
		"output": "$<<both.text>>"
	}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := e.Run(context.Background(), plan, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Strategy, res.Waves)
	for _, s := range res.Steps {
		fmt.Println(s.ID, s.Status)
	}
	fmt.Println(res.Output)
	// Output:
	// HYBRID_TOOLS [[greet name] [both]]
	// greet succeeded
	// name succeeded
	// both succeeded
	// HELLO, WORLD! ($<<LITERAL>>)
}

func ExampleValidationError() {
	e := executor.New(executor.Options{
		Caller: upper{},
		Lookup: func(name string) (executor.ToolInfo, bool) { return executor.ToolInfo{Name: name}, name == "upper" },
	})
	_, err := e.Validate(&executor.Plan{Steps: []executor.Step{
		{ID: "a", Tool: "upper", Args: map[string]any{"text": "$<<b.text>>"}},
		{ID: "b", Tool: "upper", Args: map[string]any{"text": "$<<a.text>>"}},
		{ID: "c", Tool: "lower"},
	}})
	fmt.Println(err)
	// Output:
	// invalid plan, 2 problems:
	// step "c": tool: the catalog has no tool "lower"
	// step "a": cycle: a -> b -> a
}
