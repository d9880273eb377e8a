package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// BenchmarkCall measures tools/call on the built-in calculator three ways,
// each over a real stdio process as an MCP client starts it:
//
//	direct         client -> mcp-router builtin calculator
//	proxy          client -> mcp-router serve (calculator in-process)
//	proxy_stdio    client -> mcp-router serve -> mcp-router builtin calculator (child)
//
// Each reports ns/op (throughput at the given concurrency) and p50/p99
// latency. scripts/bench prints them as a table with ratios to direct.
func BenchmarkCall(b *testing.B) {
	bin := buildBinary(b)
	dir := b.TempDir()
	inproc := writeFile(b, dir, "inproc.yaml", "profiles:\n  default:\n    upstreams:\n      calculator: {builtin: calculator}\n")
	child := writeFile(b, dir, "child.yaml", fmt.Sprintf(
		"profiles:\n  default:\n    upstreams:\n      calculator: {command: %q, args: [builtin, calculator]}\n", bin))
	arms := []struct {
		name, tool string
		args       []string
	}{
		{"direct", "add", []string{"builtin", "calculator"}},
		{"proxy", "calculator_add", []string{"serve", "--config", inproc, "--log-level", "error"}},
		{"proxy_stdio", "calculator_add", []string{"serve", "--config", child, "--log-level", "error"}},
	}
	for _, conc := range []int{1, 8} {
		for _, arm := range arms {
			b.Run(fmt.Sprintf("%s/conc=%d", arm.name, conc), func(b *testing.B) {
				c := stdioClient(b, bin, arm.args...)
				benchCalls(b, c, arm.tool, conc)
			})
		}
	}
}

func writeFile(tb testing.TB, dir, name, content string) string {
	tb.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		tb.Fatal(err)
	}
	return path
}

// stdioClient starts bin with args as a stdio MCP server and initializes.
func stdioClient(tb testing.TB, bin string, args ...string) *client.Client {
	tb.Helper()
	tr := transport.NewStdio(bin, nil, args...)
	c := client.NewClient(tr, client.WithProtocolVersion("2025-11-25"))
	ctx := context.WithoutCancel(tb.Context())
	if err := c.Start(ctx); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { c.Close() })
	initCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if _, err := c.Initialize(initCtx, mcp.InitializeRequest{}); err != nil {
		tb.Fatal(err)
	}
	return c
}

// benchCalls runs b.N calls with conc in flight and reports latency
// percentiles alongside ns/op.
func benchCalls(b *testing.B, c *client.Client, tool string, conc int) {
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = map[string]any{"a": 2, "b": 3}
	lat := make([]time.Duration, b.N)
	var next sync.Mutex
	i := 0
	b.ResetTimer()
	var wg sync.WaitGroup
	for range conc {
		wg.Go(func() {
			for {
				next.Lock()
				n := i
				i++
				next.Unlock()
				if n >= b.N {
					return
				}
				start := time.Now()
				res, err := c.CallTool(b.Context(), req)
				lat[n] = time.Since(start)
				if err != nil || res.IsError {
					b.Errorf("call %s: %v %v", tool, err, res)
					return
				}
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50_µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99_µs")
}
