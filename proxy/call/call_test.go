package call

import (
	"context"
	"slices"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

func TestChainRunsStagesInOrder(t *testing.T) {
	var order []string
	stage := func(name string) Stage {
		return func(ctx context.Context, c *Call, next Handler) (*mcp.CallToolResult, error) {
			order = append(order, name)
			res, err := next(ctx, c)
			order = append(order, "/"+name)
			return res, err
		}
	}
	last := func(context.Context, *Call) (*mcp.CallToolResult, error) {
		order = append(order, "upstream")
		return mcp.NewToolResultText("ok"), nil
	}
	h := Chain(last, stage("a"), stage("b"))
	if _, err := h(context.Background(), &Call{Tool: "t"}); err != nil {
		t.Fatal(err)
	}
	want := []string{"a", "b", "upstream", "/b", "/a"}
	if !slices.Equal(order, want) {
		t.Fatalf("got %v, want %v", order, want)
	}
}
