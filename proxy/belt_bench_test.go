package proxy

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcp-router/mcp-router/routing"
	"github.com/mcp-router/mcp-router/routing/eval"
)

// benchSet loads a set of the shared routing benchmark (found beside the
// module root), skipping t when it is absent.
func benchSet(t *testing.T, name string) ([]routing.Tool, []eval.Query) {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		if filepath.Dir(dir) == dir {
			t.Skip("module root not found")
		}
		dir = filepath.Dir(dir)
	}
	set := filepath.Join(dir, "..", "shared", "bench", "routing", name)
	tf, err := os.Open(filepath.Join(set, "tools.jsonl"))
	if err != nil {
		t.Skipf("benchmark set %s absent: %v", name, err)
	}
	defer tf.Close()
	tools, err := eval.LoadTools(tf)
	if err != nil {
		t.Fatalf("%s tools: %v", name, err)
	}
	qf, err := os.Open(filepath.Join(set, "queries.jsonl"))
	if err != nil {
		t.Skipf("benchmark set %s absent: %v", name, err)
	}
	defer qf.Close()
	queries, err := eval.LoadQueries(qf)
	if err != nil {
		t.Fatalf("%s queries: %v", name, err)
	}
	return tools, queries
}

// catalogUpstream serves tools from a real MCP server over streamable
// HTTP, each answering "ok".
func catalogUpstream(t *testing.T, name string, tools []routing.Tool) UpstreamConfig {
	t.Helper()
	s := server.NewMCPServer(name, "1.0.0", server.WithToolCapabilities(true))
	ok := func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("ok"), nil
	}
	for _, tl := range tools {
		schema := tl.InputSchema
		var probe map[string]any
		if json.Unmarshal(schema, &probe) != nil || probe["type"] != "object" {
			schema = json.RawMessage(`{"type":"object"}`)
		}
		s.AddTool(mcp.NewToolWithRawSchema(tl.Name, tl.Description, schema), ok)
	}
	ts := httptest.NewServer(server.NewStreamableHTTPServer(s))
	t.Cleanup(ts.Close)
	return UpstreamConfig{Name: name, Transport: TransportStreamableHTTP, URL: ts.URL + "/mcp"}
}

// TestBenchRequestMoreTools measures what the real request_more_tools
// returns, over a hub of a benchmark catalog served by a real MCP
// server: each of a sample of people's requests to chat plugins
// (metatool) is one call in a fresh client session, and R@5 is read from
// the tools the result lists, in order. It must stay close to the
// ranking behind it and hand over a few tools, not one.
func TestBenchRequestMoreTools(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped under -short")
	}
	tools, queries := benchSet(t, "metatool")
	var sample []eval.Query
	for i := 0; i < len(queries); i += len(queries) / 300 {
		sample = append(sample, queries[i])
	}
	h := startHub(t, catalogUpstream(t, "mt", tools))
	srv := NewServer(ServerOptions{Hub: h, Router: routing.NewRouter(routing.RouterOptions{}),
		Session: routing.SessionOptions{MaxDiscoveries: 1000, ResetAfter: time.Hour}})
	t.Cleanup(srv.Close)
	ts := httptest.NewServer(srv.HTTPHandler())
	t.Cleanup(ts.Close)

	belt := rankerFunc(func(query string) []string {
		c := sdkOverHTTP(t, ts.URL)
		d := decodeDiscovery(t, c.call(t, "request_more_tools", map[string]any{"query": query}))
		names := make([]string, len(d.Tools))
		for i, tl := range d.Tools {
			names[i] = tl.Name
		}
		_ = c.session.Close()
		return names
	})
	handed, _ := eval.Run(belt, sample, eval.Options{K: 50})
	handed.Name = "request_more_tools"
	ranked, _ := eval.Run(eval.IndexRanker{Index: eval.BuildIndex(tools, routing.IndexOptions{})}, sample, eval.Options{})
	ranked.Name = "ranking"
	sizes := slices.Sorted(slices.Values(belt.sizes))
	t.Logf("metatool, %d requests through request_more_tools against the ranking:\n%s\nmedian tools returned %d, none for %d requests",
		len(sample), eval.Table(ranked, handed), sizes[len(sizes)/2], zeros(sizes))
	if med := sizes[len(sizes)/2]; med < 3 {
		t.Errorf("median %d tools returned, want at least 3", med)
	}
	if handed.R5 < ranked.R5-0.08 {
		t.Errorf("request_more_tools R@5 %.3f, want within 0.08 of the ranking's %.3f", handed.R5, ranked.R5)
	}
}

// rankerFunc is an eval.Ranker from a function; it records how many
// tools each query got.
type rankerFuncT struct {
	fn    func(string) []string
	sizes []int
}

func rankerFunc(fn func(string) []string) *rankerFuncT { return &rankerFuncT{fn: fn} }

func (r *rankerFuncT) Rank(query string, _ int) []string {
	names := r.fn(query)
	r.sizes = append(r.sizes, len(names))
	return names
}

func zeros(xs []int) int {
	n := 0
	for _, x := range xs {
		if x == 0 {
			n++
		}
	}
	return n
}
