package proxy

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcp-router/mcp-router/routing"
)

// benchCatalogServer serves the tools of a bench dataset (../shared/bench/routing)
// as one MCP server, so the context a client sees can be measured on a
// catalog of real size.
func benchCatalogServer(t *testing.T, set string) func(string, []string) (*server.MCPServer, error) {
	t.Helper()
	path := filepath.Join("..", "..", "shared", "bench", "routing", set, "tools.jsonl")
	f, err := os.Open(path)
	if err != nil {
		t.Skipf("bench data not present: %v", err)
	}
	defer f.Close()
	srv := server.NewMCPServer(set, "1", server.WithToolCapabilities(false))
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var line struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			InputSchema json.RawMessage `json:"input_schema"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatal(err)
		}
		schema := line.InputSchema
		if len(schema) < 3 {
			schema = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		srv.AddTool(mcp.NewToolWithRawSchema(line.Name, line.Description, schema),
			func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return mcp.NewToolResultText("ok"), nil
			})
	}
	return func(string, []string) (*server.MCPServer, error) { return srv, nil }
}

// TestContextSaved measures the bytes of tools/list with the whole catalog
// against the routed belt, before and after one request_more_tools, on a
// catalog of 1,000+ tools. Goal: the belt at most 10% of the whole.
func TestContextSaved(t *testing.T) {
	if testing.Short() {
		t.Skip("reads the bench catalog")
	}
	build := benchCatalogServer(t, "bfcl")
	h := startHubWith(t, Options{Upstreams: []UpstreamConfig{{Name: "bench", Transport: TransportBuiltin, Builtin: "bench"}}, Builtin: build,
		InitTimeout: time.Minute}) // a catalog of 1,000+ tools, vetted under -race on a busy machine
	size := func(c *sdkClient) (int, int) {
		res, err := c.session.ListTools(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(res)
		return len(b), len(res.Tools)
	}
	whole, wholeN := size(overHTTPWith(t, ServerOptions{Hub: h}))
	c := overHTTPWith(t, ServerOptions{Hub: h, Router: routing.NewRouter(routing.RouterOptions{})})
	initial, initialN := size(c)
	c.call(t, "request_more_tools", map[string]any{"query": "calculate the area of a triangle given its base and height"})
	after, afterN := size(c)
	t.Logf("tools/list on a %d-tool catalog (tokens ~ bytes/4):", wholeN)
	t.Logf("  whole catalog     %4d tools %8d bytes ~%6d tokens  100%%", wholeN, whole, whole/4)
	t.Logf("  initial belt      %4d tools %8d bytes ~%6d tokens  %.2f%%", initialN, initial, initial/4, 100*float64(initial)/float64(whole))
	t.Logf("  after 1 discovery %4d tools %8d bytes ~%6d tokens  %.2f%%", afterN, after, after/4, 100*float64(after)/float64(whole))
	if wholeN < 500 {
		t.Errorf("catalog has %d tools, want 500+ for this measurement", wholeN)
	}
	if float64(after) > 0.10*float64(whole) {
		t.Errorf("belt after one discovery is %d bytes, over 10%% of the whole catalog's %d", after, whole)
	}
}
