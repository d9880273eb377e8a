package proxy

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-router/mcp-router/internal/fakeollama"
	"github.com/mcp-router/mcp-router/routing"
)

// pad makes s exactly n bytes long with trailing words.
func pad(s string, n int) string {
	return s + strings.Repeat(" x", (n-len(s))/2) + strings.Repeat(" ", (n-len(s))%2)
}

// inputServer serves two fake upstreams with routing, lessons and a
// planner over a fake Ollama, under small input limits.
func inputServer(t *testing.T, limits InputLimits) *sdkClient {
	t.Helper()
	mem := fileLessons(t)
	p := fakePlanner(t, func(fakeollama.ChatRequest) (string, error) {
		return `{"decision":"REASON_ONLY","confidence":0.9,"reasoning":"no tool needed"}`, nil
	})
	h := startHub(t, builtinFake("alpha"))
	return overHTTPWith(t, ServerOptions{Hub: h, Router: routing.NewRouter(routing.RouterOptions{Lessons: mem}), Lessons: mem,
		Planner: p,
		Session: routing.SessionOptions{MaxDiscoveries: 100, ResetAfter: time.Hour}, Inputs: limits})
}

// TestBoundInputs calls each of the proxy's own tools with each bounded
// argument at its limit (served) and one byte over (an error result
// naming the tool, the argument and the limit).
func TestBoundInputs(t *testing.T) {
	const query, note, context = 200, 100, 300
	c := inputServer(t, InputLimits{MaxQueryBytes: query, MaxNoteBytes: note, MaxContextBytes: context})
	tests := []struct {
		tool, arg string
		limit     int
		args      func(v string) map[string]any
	}{
		{"request_more_tools", "query", query, func(v string) map[string]any { return map[string]any{"query": v} }},
		{"routing_feedback", "query", query, func(v string) map[string]any { return map[string]any{"query": v, "right_tool": "alpha_echo"} }},
		{"routing_feedback", "note", note, func(v string) map[string]any {
			return map[string]any{"query": "echo text", "right_tool": "alpha_echo", "note": v}
		}},
		{"plan", "query", query, func(v string) map[string]any { return map[string]any{"query": v} }},
		{"plan", "context", context, func(v string) map[string]any { return map[string]any{"query": "echo text", "context": v} }},
	}
	for _, tt := range tests {
		t.Run(tt.tool+"/"+tt.arg, func(t *testing.T) {
			at := c.call(t, tt.tool, tt.args(pad("echo the text back", tt.limit)))
			if at.IsError {
				t.Errorf("%d bytes, at the limit: %s", tt.limit, resultText(at))
			}
			over := c.call(t, tt.tool, tt.args(pad("echo the text back", tt.limit+1)))
			want := fmt.Sprintf("%s: %q is %d bytes, more than the limit of %d", tt.tool, tt.arg, tt.limit+1, tt.limit)
			if !over.IsError || !strings.Contains(resultText(over), want) {
				t.Errorf("one byte over: got %q (isError %v), want an error saying %q", resultText(over), over.IsError, want)
			}
		})
	}
}

// TestBoundInputsListMeta: a tools/list _meta query over the limit routes
// nothing (the belt is listed as it is); at the limit it routes.
func TestBoundInputsListMeta(t *testing.T) {
	const query = 200
	list := func(c *sdkClient, q string) []string {
		res, err := c.session.ListTools(t.Context(), &sdk.ListToolsParams{Meta: sdk.Meta{QueryMetaKey: q}})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tool := range res.Tools {
			names = append(names, tool.Name)
		}
		return names
	}
	at := inputServer(t, InputLimits{MaxQueryBytes: query})
	if names := list(at, pad("sleep for some milliseconds", query)); !slices.Contains(names, "alpha_sleep") {
		t.Errorf("a query at the limit: %v, want alpha_sleep routed", names)
	}
	over := inputServer(t, InputLimits{MaxQueryBytes: query})
	if names := list(over, pad("sleep for some milliseconds", query+1)); slices.Contains(names, "alpha_sleep") {
		t.Errorf("a query over the limit was routed: %v", names)
	}
}
