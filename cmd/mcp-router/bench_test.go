package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// BenchmarkCall measures tools/call, each arm a real process as an MCP
// client starts or reaches it, over stdio and over streamable HTTP, on the
// built-in calculator and on a real npm server, in both protocol eras
// (the 2025-11-25 session era and the stateless 2026-07-28 one):
//
//	stdio/direct       client -stdio-> mcp-router builtin calculator
//	stdio/proxy        client -stdio-> mcp-router serve -stdio-> builtin calculator (child)
//	stdio/inproc       client -stdio-> mcp-router serve (calculator in-process)
//	stdio/floor        client -stdio-> byte copier -stdio-> builtin calculator (child)
//	http/direct        client -HTTP->  mcp-router builtin calculator --http
//	http/proxy         client -HTTP->  mcp-router serve --http -HTTP-> the same calculator
//	http/floor         client -HTTP->  TCP splice -HTTP-> the same calculator
//	stdio-node/direct  client -stdio-> server-everything (Node), its get-sum tool
//	stdio-node/proxy   client -stdio-> mcp-router serve -stdio-> server-everything (child)
//	stdio-node/floor   client -stdio-> byte copier -stdio-> server-everything (child)
//
// The arms of a transport reach the same upstream the same way, so proxy
// against direct is the gateway's cost, and proxy against floor is what
// the gateway costs beyond a process in the middle that only passes bytes
// (this test binary re-executed as a forwarder, see floorEnvVar): two more
// pipe or socket hops and the wakeups of a third process on the same
// cores. The calculator answers in tens of microseconds, so any middle
// shows in full; server-everything is an upstream of the cost a user
// runs. The era is the client's: the gateway speaks 2025-11-25 to its
// upstreams in both (they are pinned so by default), where the direct and
// floor arms speak the client's era end to end. Each reports ns/op
// (throughput at the given concurrency), p50/p99 latency and, on Linux,
// server_cpu_µs: the CPU time per call of the process the client talks to
// (the upstream direct, the gateway or the forwarder alone through it),
// which a busy machine disturbs far less than throughput. The stdio-node
// arms skip without node_modules or node, and in the 2026-07-28 era
// (server-everything speaks 2025-11-25 at the newest). scripts/bench runs
// it in interleaved rounds and prints each figure's min/median/max, and
// ratios to direct and to floor taken within each round.
//
// An arm's processes start once, in the first round of its sub-benchmark,
// and serve every later round, so the rounds that ramp b.N up also warm
// them (a JIT, a grown heap) before the round that counts.
func BenchmarkCall(b *testing.B) {
	bin := buildBinary(b)
	dir := b.TempDir()
	calcURL, calcPID := startHTTPServer(b, dir, nil, bin, "builtin", "calculator", "--http", "127.0.0.1:0")
	inproc := writeFile(b, dir, "inproc.yaml", "profiles:\n  default:\n    upstreams:\n      calculator: {builtin: calculator}\n")
	child := writeFile(b, dir, "child.yaml", fmt.Sprintf(
		"profiles:\n  default:\n    upstreams:\n      calculator: {command: %q, args: [builtin, calculator]}\n", bin))
	remote := writeFile(b, dir, "remote.yaml", fmt.Sprintf(
		"profiles:\n  default:\n    upstreams:\n      calculator: {url: %q}\n", calcURL+"/mcp"))
	proxyURL, proxyPID := startHTTPServer(b, dir, nil, bin, "serve", "--http", "127.0.0.1:0", "--config", remote, "--log-level", "info")
	floorExe, floorEnv := floorCommand(b, "http")
	floorURL, floorPID := startHTTPServer(b, dir, floorEnv, floorExe, calcURL)
	everything, nodeMissing := npmServer("mcp-server-everything")
	node := writeFile(b, dir, "node.yaml", fmt.Sprintf(
		"profiles:\n  default:\n    upstreams:\n      everything: {command: %q}\n", everything))
	type dialer = func(tb testing.TB, era string) (*client.Client, func() int)
	stdio := func(env []string, bin string, args ...string) dialer {
		return func(tb testing.TB, era string) (*client.Client, func() int) {
			return stdioClientEra(tb, env, era, bin, args...)
		}
	}
	overHTTP := func(url string, pid int) dialer {
		return func(tb testing.TB, era string) (*client.Client, func() int) {
			return httpClientEra(tb, url+"/mcp", era), func() int { return pid }
		}
	}
	stdioFloor := func(args ...string) dialer {
		exe, env := floorCommand(b, "stdio")
		return stdio(env, exe, args...)
	}
	arms := []struct {
		transport, name, tool string
		dial                  dialer
	}{
		{"stdio", "direct", "add", stdio(nil, bin, "builtin", "calculator")},
		{"stdio", "proxy", "calculator_add", stdio(nil, bin, "serve", "--config", child, "--log-level", "error")},
		{"stdio", "inproc", "calculator_add", stdio(nil, bin, "serve", "--config", inproc, "--log-level", "error")},
		{"stdio", "floor", "add", stdioFloor(bin, "builtin", "calculator")},
		{"http", "direct", "add", overHTTP(calcURL, calcPID)},
		{"http", "proxy", "calculator_add", overHTTP(proxyURL, proxyPID)},
		{"http", "floor", "add", overHTTP(floorURL, floorPID)},
		{"stdio-node", "direct", "get-sum", stdio(nil, everything)},
		{"stdio-node", "proxy", "everything_get-sum", stdio(nil, bin, "serve", "--config", node, "--log-level", "error")},
		{"stdio-node", "floor", "get-sum", stdioFloor(everything)},
	}
	if base := baseBinary(b); base != "" {
		baseURL, basePID := startHTTPServer(b, dir, nil, base, "serve", "--http", "127.0.0.1:0", "--config", remote, "--log-level", "info")
		arms = append(arms, []struct {
			transport, name, tool string
			dial                  dialer
		}{
			{"stdio", "base", "calculator_add", stdio(nil, base, "serve", "--config", child, "--log-level", "error")},
			{"http", "base", "calculator_add", overHTTP(baseURL, basePID)},
		}...)
	}
	for _, era := range []string{sessionEra, statelessEra} {
		for _, conc := range []int{1, 8, 32} {
			for _, arm := range arms {
				kept := &lasting{}
				var (
					c   *client.Client
					pid func() int
				)
				b.Run(fmt.Sprintf("%s/%s/%s/conc=%d", era, arm.transport, arm.name, conc), func(b *testing.B) {
					switch {
					case arm.transport == "stdio-node" && nodeMissing != "":
						b.Skip(nodeMissing)
					case arm.transport == "stdio-node" && era == statelessEra:
						b.Skip("server-everything speaks 2025-11-25 at the newest")
					}
					if c == nil {
						kept.TB = b
						c, pid = arm.dial(kept, era)
						// A gateway answers initialize before its upstreams
						// connect: the first call waits for a Node start, which
						// would skew how b.N ramps up. It is not measured.
						if res, err := c.CallTool(b.Context(), addRequest(arm.tool)); err != nil || res.IsError {
							b.Fatalf("first call of %s: %v %v", arm.tool, err, res)
						}
					}
					benchCalls(b, c, pid(), arm.tool, conc)
				})
				kept.end()
			}
		}
	}
}

// baseEnvVar names another mcp-router binary (one built from main, say)
// that BenchmarkCall and BenchmarkInstructions measure as a gateway arm
// "base" beside "proxy", so that a change is measured against what it
// changes in one run, side by side. Unset, there is no base arm.
const baseEnvVar = "MCP_ROUTER_BENCH_BASE"

// baseBinary is the binary baseEnvVar names, or "" when it is unset.
func baseBinary(tb testing.TB) string {
	base := os.Getenv(baseEnvVar)
	if base == "" {
		return ""
	}
	if _, err := os.Stat(base); err != nil {
		tb.Fatalf("%s: %v", baseEnvVar, err)
	}
	return base
}

// The protocol eras BenchmarkCall measures.
const (
	sessionEra   = "2025-11-25"
	statelessEra = "2026-07-28"
)

// lasting is a testing.TB whose Cleanup keeps what it is given until end,
// so what the first round of a sub-benchmark starts outlives the round.
// Everything else goes to the sub-benchmark's own B, which is the same in
// every round. Its users must not call TempDir or Setenv, which would
// still end with the round.
type lasting struct {
	testing.TB
	cleanups []func()
}

func (l *lasting) Cleanup(f func()) { l.cleanups = append(l.cleanups, f) }

// end runs the cleanups, last first, as testing does.
func (l *lasting) end() {
	for i := len(l.cleanups) - 1; i >= 0; i-- {
		l.cleanups[i]()
	}
	l.cleanups = nil
}

// npmServer is the path of an npm MCP server's command in the
// repository's node_modules, or why it cannot run here.
func npmServer(name string) (path, missing string) {
	path, err := filepath.Abs(filepath.Join("..", "..", "node_modules", ".bin", name))
	if err != nil {
		return "", err.Error()
	}
	if _, err := os.Stat(path); err != nil {
		return path, fmt.Sprintf("%s is not installed (run npm ci at the repository root): %v", name, err)
	}
	if _, err := exec.LookPath("node"); err != nil {
		return path, fmt.Sprintf("%s needs node on PATH: %v", name, err)
	}
	return path, ""
}

// startHTTPServer runs bin with args (a command given --http 127.0.0.1:0)
// and env added to an isolated environment,
// stops it when tb ends, and returns its base URL (without /mcp) as it logs
// it, and its process id.
func startHTTPServer(tb testing.TB, dir string, env []string, bin string, args ...string) (string, int) {
	tb.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(isolatedEnv(dir, "NO_COLOR=1"), env...)
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
		// SIGTERM, not SIGINT: a shell's background job starts with
		// SIGINT ignored, and a process that ignores it never ends.
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-scanned:
		case <-time.After(time.Minute): // long for a process under valgrind
			cmd.Process.Kill()
			<-scanned
		}
		cmd.Wait()
	})
	select {
	case u := <-urls:
		return u, cmd.Process.Pid
	case <-time.After(2 * time.Minute): // long for a process under valgrind
		tb.Fatalf("%s %v reported no address", filepath.Base(bin), args)
		return "", 0
	}
}

// httpClient connects a streamable HTTP client to url and initializes, on
// the 2025-11-25 protocol.
func httpClient(tb testing.TB, url string) *client.Client {
	tb.Helper()
	return httpClientEra(tb, url, sessionEra)
}

// httpClientEra is httpClient on the protocol version era. Its HTTP
// client keeps as many idle connections as the benchmark has calls in
// flight, so connection churn does not hide the server's cost.
func httpClientEra(tb testing.TB, url, era string) *client.Client {
	tb.Helper()
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64, MaxIdleConns: 64}}
	tr, err := transport.NewStreamableHTTP(url, transport.WithHTTPBasicClient(hc))
	if err != nil {
		tb.Fatal(err)
	}
	return startClient(tb, client.NewClient(tr, client.WithProtocolVersion(era)))
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
	c, _ := stdioClientPID(tb, nil, bin, args...)
	return c
}

// stdioClientPID is stdioClient with env added to this process's
// environment, and says the server's process id.
func stdioClientPID(tb testing.TB, env []string, bin string, args ...string) (c *client.Client, pid func() int) {
	tb.Helper()
	return stdioClientEra(tb, env, sessionEra, bin, args...)
}

// stdioClientEra is stdioClientPID on the protocol version era.
func stdioClientEra(tb testing.TB, env []string, era, bin string, args ...string) (c *client.Client, pid func() int) {
	tb.Helper()
	var cmd *exec.Cmd
	tr := transport.NewStdioWithOptions(bin, env, args, transport.WithCommandFunc(
		func(ctx context.Context, command string, env, args []string) (*exec.Cmd, error) {
			cmd = exec.CommandContext(ctx, command, args...)
			cmd.Env = append(os.Environ(), env...)
			return cmd, nil
		}))
	c = startClient(tb, client.NewClient(tr, client.WithProtocolVersion(era)))
	return c, func() int { return cmd.Process.Pid }
}

// startClient starts c, closes it when tb ends, and initializes.
func startClient(tb testing.TB, c *client.Client) *client.Client {
	tb.Helper()
	ctx := context.WithoutCancel(tb.Context())
	if err := c.Start(ctx); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { c.Close() })
	initCtx, cancel := context.WithTimeout(ctx, 2*time.Minute) // long for a process under valgrind
	defer cancel()
	if _, err := c.Initialize(initCtx, mcp.InitializeRequest{}); err != nil {
		tb.Fatal(err)
	}
	return c
}

// benchCalls runs b.N calls with conc in flight and reports latency
// percentiles and the CPU time per call of the server process pid
// alongside ns/op.
func benchCalls(b *testing.B, c *client.Client, pid int, tool string, conc int) {
	req := addRequest(tool)
	lat := make([]time.Duration, b.N)
	var next sync.Mutex
	i := 0
	cpu0, cpuOK := processCPU(pid)
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
				// A call that never comes back (a process gone without the
				// client noticing) fails the arm instead of hanging the run.
				ctx, cancel := context.WithTimeout(b.Context(), time.Minute)
				start := time.Now()
				res, err := c.CallTool(ctx, req)
				lat[n] = time.Since(start)
				cancel()
				if err != nil || res.IsError {
					b.Errorf("call %s: %v %v", tool, err, res)
					return
				}
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	if cpu1, ok := processCPU(pid); ok && cpuOK {
		b.ReportMetric(float64((cpu1-cpu0).Microseconds())/float64(b.N), "server_cpu_µs")
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50_µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99_µs")
}

// addRequest calls tool, which adds its arguments a and b, on 2 and 3.
func addRequest(tool string) mcp.CallToolRequest {
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = map[string]any{"a": 2, "b": 3}
	return req
}

// processCPU is the user and system CPU time pid has used so far, read
// from /proc (false where there is none).
func processCPU(pid int) (time.Duration, bool) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, false
	}
	// Fields after the command, which is in parentheses and may hold
	// spaces: state is the first, utime and stime the 12th and 13th.
	_, rest, ok := strings.Cut(string(stat), ") ")
	f := strings.Fields(rest)
	if !ok || len(f) < 13 {
		return 0, false
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	const ticksPerSecond = 100 // USER_HZ, the same on every Linux
	return time.Duration(utime+stime) * time.Second / ticksPerSecond, true
}

// BenchmarkServeCall runs `serve` in this process and a client, one call
// at a time, over stdio (the calculator a stdio child) and over HTTP (the
// calculator served over HTTP by another process): the gateway as it is
// configured by default (state, audit, metrics) in a process that
// -cpuprofile and -memprofile see.
func BenchmarkServeCall(b *testing.B) {
	bin := buildBinary(b)
	dir := b.TempDir()
	for _, kv := range isolatedEnv(dir) {
		k, v, _ := strings.Cut(kv, "=")
		b.Setenv(k, v)
	}
	b.Run("stdio", func(b *testing.B) {
		cfg := writeFile(b, dir, "child.yaml", fmt.Sprintf(
			"profiles:\n  default:\n    upstreams:\n      calculator: {command: %q, args: [builtin, calculator]}\n", bin))
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		serveInProcess(b, []string{"serve", "--config", cfg, "--log-level", "error"}, inR, outW, io.Discard, func() { inW.Close() })
		c := startClient(b, client.NewClient(transport.NewIO(outR, inW, nil), client.WithProtocolVersion("2025-11-25")))
		benchCalls(b, c, os.Getpid(), "calculator_add", 1)
	})
	b.Run("http", func(b *testing.B) {
		calcURL, _ := startHTTPServer(b, dir, nil, bin, "builtin", "calculator", "--http", "127.0.0.1:0")
		cfg := writeFile(b, dir, "remote.yaml", fmt.Sprintf(
			"profiles:\n  default:\n    upstreams:\n      calculator: {url: %q}\n", calcURL+"/mcp"))
		logR, logW := io.Pipe()
		serveInProcess(b, []string{"serve", "--http", "127.0.0.1:0", "--config", cfg, "--log-level", "info"},
			strings.NewReader(""), io.Discard, logW, func() {})
		urls := make(chan string, 1)
		go func() {
			re := regexp.MustCompile(`url=(http://\S+)/mcp`)
			sc := bufio.NewScanner(logR)
			for sc.Scan() {
				if m := re.FindStringSubmatch(sc.Text()); m != nil {
					select {
					case urls <- m[1]:
					default:
					}
				}
			}
		}()
		b.Cleanup(func() { logW.Close() })
		u := <-urls
		benchCalls(b, httpClient(b, u+"/mcp"), os.Getpid(), "calculator_add", 1)
	})
}

// serveInProcess runs the command line args in this process until the
// test or benchmark ends; stop ends its input.
func serveInProcess(b testing.TB, args []string, in io.Reader, out, log io.Writer, stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() {
		served <- run(ctx, args, in, out, log)
		if c, ok := out.(io.Closer); ok {
			c.Close()
		}
	}()
	b.Cleanup(func() {
		cancel()
		stop()
		<-served
	})
}
