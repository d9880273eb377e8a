package proxy

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// manyServers are n in-process servers of five tools each, named s0000,
// s0001, ..., whose tools carry the server's name: no collisions.
func manyServers(n int) ([]UpstreamConfig, map[string]*server.MCPServer) {
	ups := make([]UpstreamConfig, n)
	servers := make(map[string]*server.MCPServer, n)
	ok := func(_ context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("ok"), nil
	}
	for i := range n {
		name := fmt.Sprintf("s%04d", i)
		s := server.NewMCPServer(name, "1.0.0", server.WithToolCapabilities(true))
		for j := range 5 {
			s.AddTool(mcp.NewTool(fmt.Sprintf("%s_op%d", name, j),
				mcp.WithDescription(fmt.Sprintf("Operation %d of server %s on a record.", j, name)),
				mcp.WithString("id", mcp.Description("The record's identifier"), mcp.Required())), ok)
		}
		servers[name] = s
		ups[i] = UpstreamConfig{Name: name, Transport: TransportBuiltin, Builtin: name}
	}
	return ups, servers
}

// BenchmarkHubStartManyUpstreams starts a hub over n in-process upstreams
// that connect together, and waits until every one has joined the catalog:
// the cost of a gateway's start, which grew with the square of n while
// each upstream that joined rebuilt the whole catalog.
func BenchmarkHubStartManyUpstreams(b *testing.B) {
	for _, n := range []int{50, 200, 500} {
		b.Run(fmt.Sprintf("upstreams=%d", n), func(b *testing.B) {
			ups, servers := manyServers(n)
			opts := Options{Upstreams: ups, InitTimeout: 5 * time.Minute,
				Builtin: func(name string, _ []string) (*server.MCPServer, error) { return servers[name], nil }}
			for b.Loop() {
				h := newTestHub(b, opts)
				if err := h.Start(b.Context()); err != nil {
					b.Fatalf("starting: %v", err)
				}
				if got, want := len(h.Catalog().Tools), 5*n; got != want {
					b.Fatalf("got %d tools, want %d", got, want)
				}
				h.Close()
			}
		})
	}
}
