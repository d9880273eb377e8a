package call

import (
	"context"
	"errors"
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

// Screen takes the screen before the call goes on, screens a result, and
// leaves a failure as it is; a call it cannot screen does not go on.
func TestScreen(t *testing.T) {
	upper := func(res *mcp.CallToolResult) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("screened"), nil
	}
	called := 0
	answer := func(res *mcp.CallToolResult, err error) Handler {
		return func(context.Context, *Call) (*mcp.CallToolResult, error) { called++; return res, err }
	}
	ok := Screen(func(*Call) (func(*mcp.CallToolResult) (*mcp.CallToolResult, error), error) { return upper, nil })
	res, err := ok(t.Context(), &Call{}, answer(mcp.NewToolResultText("raw"), nil))
	if err != nil || res.Content[0].(mcp.TextContent).Text != "screened" {
		t.Errorf("a result: %v, %v; want it screened", res, err)
	}
	failed := errors.New("upstream down")
	if res, err := ok(t.Context(), &Call{}, answer(nil, failed)); res != nil || err != failed {
		t.Errorf("a failure: %v, %v; want it as it is", res, err)
	}
	gone := errors.New("no upstream")
	refuse := Screen(func(*Call) (func(*mcp.CallToolResult) (*mcp.CallToolResult, error), error) { return nil, gone })
	called = 0
	if _, err := refuse(t.Context(), &Call{}, answer(mcp.NewToolResultText("raw"), nil)); err != gone || called != 0 {
		t.Errorf("no screen: %v after %d calls on; want %v and none", err, called, gone)
	}
}

// SessionTag names each session by its own hash when sessions' calls
// interleave, and the same each time (it keeps the last one worked out).
func TestSessionTagOfInterleavedSessions(t *testing.T) {
	want := map[string]string{"a": "s-ca978112ca1b", "b": "s-3e23e8160039", "": ""}
	for _, id := range []string{"a", "a", "b", "a", "", "b", "b"} {
		if got := SessionTag(id); got != want[id] {
			t.Errorf("SessionTag(%q): got %q, want %q", id, got, want[id])
		}
	}
}
