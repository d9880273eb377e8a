package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// serve over stdio answers initialize with instructions that count the
// built-in servers' tools (they join before the answer, every time) and
// name an upstream still starting with what it is for; a discovery and a
// routing_feedback sent at once find the built-in tools.
func TestServeInstructionsNameTheBuiltinsAtOnce(t *testing.T) {
	dir := t.TempDir()
	for _, kv := range isolatedEnv(dir) {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	cfg := writeFile(t, dir, "p.yaml", "profiles:\n  default:\n    upstreams:\n      calculator: {builtin: calculator}\n"+
		"      tickets: {command: sh, args: [-c, 'cat >/dev/null'], description: Tickets of the support desk}\n")
	for i := range 5 {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			inR, inW := io.Pipe()
			outR, outW := io.Pipe()
			serveInProcess(t, []string{"serve", "--config", cfg, "--log-level", "error"}, inR, outW, io.Discard, func() { inW.Close() })
			c := client.NewClient(transport.NewIO(outR, inW, nil), client.WithProtocolVersion("2025-11-25"))
			if err := c.Start(t.Context()); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.Close() })
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			res, err := c.Initialize(ctx, mcp.InitializeRequest{})
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{"from 1 MCP server ", "calculator", "tickets (starting: Tickets of the support desk)"} {
				if !strings.Contains(res.Instructions, want) {
					t.Fatalf("instructions lack %q:\n%s", want, res.Instructions)
				}
			}
			// A discovery and a feedback sent at once find the calculator.
			for _, call := range []struct {
				tool string
				args map[string]any
				want string
			}{
				{"request_more_tools", map[string]any{"query": "the natural logarithm of 10"}, "calculator_ln"},
				{"routing_feedback", map[string]any{"query": "log of 8 in base 2", "right_tool": "calculator_log"}, "Learned lesson"},
			} {
				req := mcp.CallToolRequest{}
				req.Params.Name, req.Params.Arguments = call.tool, call.args
				got, err := c.CallTool(ctx, req)
				if err != nil || got.IsError || len(got.Content) == 0 || !strings.Contains(mcp.GetTextFromContent(got.Content[0]), call.want) {
					t.Fatalf("%s right after initialize: %+v, %v; want %q", call.tool, got, err, call.want)
				}
			}
		})
	}
}
