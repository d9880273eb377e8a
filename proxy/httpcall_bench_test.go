package proxy

import (
	"net/http/httptest"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-router/mcp-router/proxy/frontdoor"
)

// BenchmarkHTTPCall measures a tools/call over streamable HTTP through
// Guard and the client-facing server, as serve wires them, to an
// in-process upstream, in both protocol eras: the HTTP call path's own
// cost (with the client's in the same process) to profile and to count
// allocations of (-benchmem).
func BenchmarkHTTPCall(b *testing.B) {
	for _, era := range []string{"2025-11-25", "2026-07-28"} {
		b.Run(era, func(b *testing.B) {
			srv := NewServer(ServerOptions{Hub: startHub(b, builtinFake("alpha"))})
			b.Cleanup(srv.Close)
			ts := httptest.NewServer(frontdoor.Guard(srv.HTTPHandler(), frontdoor.Options{}))
			b.Cleanup(ts.Close)
			tr, err := transport.NewStreamableHTTP(ts.URL + "/mcp")
			if err != nil {
				b.Fatal(err)
			}
			c := client.NewClient(tr, client.WithProtocolVersion(era))
			b.Cleanup(func() { c.Close() })
			if err := c.Start(b.Context()); err != nil {
				b.Fatal(err)
			}
			if _, err := c.Initialize(b.Context(), mcp.InitializeRequest{}); err != nil {
				b.Fatal(err)
			}
			req := mcp.CallToolRequest{}
			req.Params.Name = "alpha_echo"
			req.Params.Arguments = map[string]any{"text": "x"}
			b.ReportAllocs()
			for b.Loop() {
				if res, err := c.CallTool(b.Context(), req); err != nil || res.IsError {
					b.Fatal(err, res)
				}
			}
		})
	}
}
