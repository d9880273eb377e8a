package call

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

// oneSchema is a catalog of one tool whose arguments are checked.
type oneSchema struct {
	tool   string
	schema json.RawMessage
}

func (s *oneSchema) InputSchema(c *Call) (json.RawMessage, Catalog) {
	if c.Tool != s.tool {
		return nil, s
	}
	return s.schema, s
}

func (s *oneSchema) Has(tool string) bool { return tool == s.tool }

// BenchmarkArgCheck is the check a validated call pays on the hot path: a
// small schema, already compiled, against raw arguments as a client sends
// them.
func BenchmarkArgCheck(b *testing.B) {
	schema := json.RawMessage(`{"type":"object","properties":{` +
		`"query":{"type":"string","minLength":1},"limit":{"type":"integer","minimum":1,"maximum":100},` +
		`"tags":{"type":"array","items":{"type":"string"}},"exact":{"type":"boolean"}},"required":["query"]}`)
	args := json.RawMessage(`{"query":"weather in Paris","limit":10,"tags":["news","today"],"exact":false}`)
	check := NewArgCheck(&oneSchema{tool: "up_search", schema: schema}, nil).Stage
	c := &Call{Tool: "up_search", Upstream: "up", Args: args}
	next := func(context.Context, *Call) (*mcp.CallToolResult, error) { return nil, nil }
	if _, err := check(b.Context(), c, next); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := check(b.Context(), c, next); err != nil {
			b.Fatal(err)
		}
	}
}

// TestArgCheckKeepsSchemasOfCatalogTools checks that a new catalog drops
// the compiled schemas of tools it lacks and keeps the others'.
func TestArgCheckKeepsSchemasOfCatalogTools(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{"n":{"type":"number"}}}`)
	a := NewArgCheck(nil, nil)
	next := func(context.Context, *Call) (*mcp.CallToolResult, error) { return nil, nil }
	for _, tool := range []string{"up_gone", "up_kept"} {
		a.schemas = &oneSchema{tool: tool, schema: schema}
		if _, err := a.Stage(t.Context(), &Call{Tool: tool, Upstream: "up"}, next); err != nil {
			t.Fatal(err)
		}
	}
	for tool, want := range map[string]bool{"up_gone": false, "up_kept": true} {
		if _, ok := a.cache.Load(tool); ok != want {
			t.Errorf("%s's schema cached = %v, want %v", tool, ok, want)
		}
	}
}
