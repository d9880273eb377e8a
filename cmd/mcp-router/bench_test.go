package main

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// BenchmarkCall measures tools/call on the built-in calculator, each arm a
// real process as an MCP client starts or reaches it, over stdio and over
// streamable HTTP:
//
//	stdio/direct   client -stdio-> mcp-router builtin calculator
//	stdio/proxy    client -stdio-> mcp-router serve -stdio-> builtin calculator (child)
//	stdio/inproc   client -stdio-> mcp-router serve (calculator in-process)
//	http/direct    client -HTTP->  mcp-router builtin calculator --http
//	http/proxy     client -HTTP->  mcp-router serve --http -HTTP-> the same calculator
//
// The direct and proxy arms of a transport reach the same upstream the same
// way, so their difference is the gateway's cost. Each reports ns/op
// (throughput at the given concurrency) and p50/p99 latency; scripts/bench
// prints them as a table with ratios to direct, all from one run.
func BenchmarkCall(b *testing.B) {
	bin := buildBinary(b)
	dir := b.TempDir()
	calcURL := startHTTPServer(b, dir, bin, "builtin", "calculator", "--http", "127.0.0.1:0")
	inproc := writeFile(b, dir, "inproc.yaml", "profiles:\n  default:\n    upstreams:\n      calculator: {builtin: calculator}\n")
	child := writeFile(b, dir, "child.yaml", fmt.Sprintf(
		"profiles:\n  default:\n    upstreams:\n      calculator: {command: %q, args: [builtin, calculator]}\n", bin))
	remote := writeFile(b, dir, "remote.yaml", fmt.Sprintf(
		"profiles:\n  default:\n    upstreams:\n      calculator: {url: %q}\n", calcURL+"/mcp"))
	proxyURL := startHTTPServer(b, dir, bin, "serve", "--http", "127.0.0.1:0", "--config", remote, "--log-level", "info")
	arms := []struct {
		transport, name, tool string
		dial                  func(testing.TB) *client.Client
	}{
		{"stdio", "direct", "add", func(tb testing.TB) *client.Client { return stdioClient(tb, bin, "builtin", "calculator") }},
		{"stdio", "proxy", "calculator_add", func(tb testing.TB) *client.Client {
			return stdioClient(tb, bin, "serve", "--config", child, "--log-level", "error")
		}},
		{"stdio", "inproc", "calculator_add", func(tb testing.TB) *client.Client {
			return stdioClient(tb, bin, "serve", "--config", inproc, "--log-level", "error")
		}},
		{"http", "direct", "add", func(tb testing.TB) *client.Client { return httpClient(tb, calcURL+"/mcp") }},
		{"http", "proxy", "calculator_add", func(tb testing.TB) *client.Client { return httpClient(tb, proxyURL+"/mcp") }},
	}
	for _, conc := range []int{1, 8, 32} {
		for _, arm := range arms {
			b.Run(fmt.Sprintf("%s/%s/conc=%d", arm.transport, arm.name, conc), func(b *testing.B) {
				benchCalls(b, arm.dial(b), arm.tool, conc)
			})
		}
	}
}

// startHTTPServer runs bin with args (a command given --http 127.0.0.1:0),
// stops it when tb ends, and returns its base URL (without /mcp) as it logs
// it.
func startHTTPServer(tb testing.TB, dir, bin string, args ...string) string {
	tb.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = isolatedEnv(dir, "NO_COLOR=1")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	urls := make(chan string, 1)
	scanned := make(chan struct{})
	go func() {
		defer close(scanned)
		re := regexp.MustCompile(`url=(http://\S+)/mcp`)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case urls <- m[1]:
				default:
				}
			}
		}
	}()
	tb.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		<-scanned
		cmd.Wait()
	})
	select {
	case u := <-urls:
		return u
	case <-time.After(30 * time.Second):
		tb.Fatalf("%s %v reported no address", filepath.Base(bin), args)
		return ""
	}
}

// httpClient connects a streamable HTTP client to url and initializes. Its
// HTTP client keeps as many idle connections as the benchmark has calls in
// flight, so connection churn does not hide the server's cost.
func httpClient(tb testing.TB, url string) *client.Client {
	tb.Helper()
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64, MaxIdleConns: 64}}
	tr, err := transport.NewStreamableHTTP(url, transport.WithHTTPBasicClient(hc))
	if err != nil {
		tb.Fatal(err)
	}
	return startClient(tb, client.NewClient(tr, client.WithProtocolVersion("2025-11-25")))
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
	return startClient(tb, client.NewClient(tr, client.WithProtocolVersion("2025-11-25")))
}

// startClient starts c, closes it when tb ends, and initializes.
func startClient(tb testing.TB, c *client.Client) *client.Client {
	tb.Helper()
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
