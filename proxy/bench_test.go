package proxy

import (
	"context"
	"io"
	"net/http/httptest"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcp-router/mcp-router/internal/fakeupstream"
	"github.com/mcp-router/mcp-router/routing"
)

// BenchmarkServerCall measures tools/call through the client-facing server
// over in-memory stdio pipes, to an upstream served in-process, as a stdio
// child or over streamable HTTP: the proxy's own per-call cost without the
// client's process, and a whole call path to profile
// (-cpuprofile, -memprofile).
func BenchmarkServerCall(b *testing.B) {
	for _, mode := range []string{"all", "routed", "stdio", "http"} {
		b.Run(mode, func(b *testing.B) {
			up := builtinFake("alpha")
			switch mode {
			case "stdio":
				up = stdioFake("alpha")
			case "http":
				ts := httptest.NewServer(server.NewStreamableHTTPServer(fakeupstream.New("alpha")))
				b.Cleanup(ts.Close)
				up = UpstreamConfig{Name: "alpha", Transport: TransportStreamableHTTP, URL: ts.URL + "/mcp", Prefix: "alpha_"}
			}
			opts := ServerOptions{Hub: startHub(b, up)}
			if mode == "routed" {
				opts.Router = routing.NewRouter(routing.RouterOptions{})
			}
			srv := NewServer(opts)
			b.Cleanup(srv.Close)
			ctx, c := stdioPipeClient(b, srv)
			req := mcp.CallToolRequest{}
			req.Params.Name = "alpha_echo"
			req.Params.Arguments = map[string]any{"text": "x"}
			b.ResetTimer()
			for b.Loop() {
				if _, err := c.CallTool(ctx, req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// stdioPipeClient serves srv over in-memory stdio pipes to an mcp-go
// client, initialized, and ends both when b ends (before anything b was
// told to clean up earlier, such as srv and its hub).
func stdioPipeClient(b *testing.B, srv *Server) (context.Context, *client.Client) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		srv.ServeStdio(ctx, inR, outW)
		outW.Close()
	}()
	c := client.NewClient(transport.NewIO(outR, inW, nil))
	b.Cleanup(func() {
		c.Close()
		cancel()
		inR.Close()
		<-done
	})
	if err := c.Start(ctx); err != nil {
		b.Fatal(err)
	}
	if _, err := c.Initialize(ctx, mcp.InitializeRequest{}); err != nil {
		b.Fatal(err)
	}
	return ctx, c
}
