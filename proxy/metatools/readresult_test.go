package metatools

import (
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-router/mcp-router/executor"
	"github.com/mcp-router/mcp-router/proxy/call"
	"github.com/mcp-router/mcp-router/proxy/results"
)

// read_result reads a kept result in pages no longer than the bound on
// what reaches the model, whatever length the model asks, and only for
// the principal that made the call.
func TestReadResultPagesWithinTheBound(t *testing.T) {
	h, store := newFakeHub(), results.New(results.Options{})
	tools := New(Options{Catalog: h, Caller: h, Starts: h, Executor: executor.New(executor.Options{Caller: h}),
		Results: store, ResultPage: 100})
	// Letters past f: the result URI is hex, so it never holds them.
	whole := strings.Repeat("ghijklmnop", 25)
	uri, err := store.Keep("alice", whole)
	if err != nil {
		t.Fatal(err)
	}
	read := func(who string, args map[string]any) *mcp.CallToolResult {
		req := mcp.CallToolRequest{}
		req.Params.Name, req.Params.Arguments = ReadResultName, args
		res, err := tools.readResult(t.Context(), &call.Call{Principal: who, Tool: ReadResultName}, req)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	res := read("alice", map[string]any{"uri": uri, "offset": 100, "length": 1000})
	if page := res.Content[0].(mcp.TextContent).Text; page != whole[100:200] {
		t.Errorf("page at 100 asking 1000 bytes: got %d bytes, want bytes 100 to 200", len(page))
	}
	if sc := res.StructuredContent.(map[string]any); sc["next_offset"] != 200 || sc["total"] != len(whole) {
		t.Errorf("structured content %v, want next_offset 200 and total %d", sc, len(whole))
	}
	if res := read("bob", map[string]any{"uri": uri}); !res.IsError || strings.Contains(res.Content[0].(mcp.TextContent).Text, "ghij") {
		t.Errorf("another principal's read: got %+v, want an error", res.Content)
	}
}
