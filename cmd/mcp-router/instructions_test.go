package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// instructionsEnvVar, set to a number of calls, makes
// BenchmarkInstructions run (scripts/bench instructions sets it); unset,
// it skips.
const instructionsEnvVar = "MCP_ROUTER_BENCH_INSTRUCTIONS"

// BenchmarkInstructions counts the instructions one tools/call costs the
// process a client talks to (the upstream direct, the floor or the
// gateway; not their children), over stdio and HTTP in both eras, by
// running that process under valgrind: once for a fifth of the calls and
// once for all of them, so that start and exit cancel out of the
// difference, which it divides by the calls between, one call at a time.
// It does so instructionRounds times and reports the median (instr/call)
// and the spread (min_ and max_instr/call): on a loaded machine a gateway
// over HTTP counted 662k in one round and 917k in the next, since how
// often its threads park and wake, and so the runtime's instructions,
// moves with the time a call takes. The count is cachegrind's (the same instructions
// callgrind counts): callgrind 3.19 fails an assertion on the signals a
// Go process gets (a child's SIGCHLD, SIGINT), so it serves for
// profiles of a process without children, not here. It runs one round
// whatever -benchtime says (use 1x), and skips without valgrind.
func BenchmarkInstructions(b *testing.B) {
	calls, err := strconv.Atoi(os.Getenv(instructionsEnvVar))
	if err != nil || calls < 10 {
		b.Skipf("set %s to a number of calls (at least 10) to count instructions under valgrind", instructionsEnvVar)
	}
	valgrind, err := exec.LookPath("valgrind")
	if err != nil {
		b.Skipf("valgrind is not installed, so no instruction counts: %v", err)
	}
	bin := buildBinary(b)
	dir := b.TempDir()
	calcURL, _ := startHTTPServer(b, dir, nil, bin, "builtin", "calculator", "--http", "127.0.0.1:0")
	child := writeFile(b, dir, "child.yaml", fmt.Sprintf(
		"profiles:\n  default:\n    upstreams:\n      calculator: {command: %q, args: [builtin, calculator]}\n", bin))
	remote := writeFile(b, dir, "remote.yaml", fmt.Sprintf(
		"profiles:\n  default:\n    upstreams:\n      calculator: {url: %q}\n", calcURL+"/mcp"))
	floorExe, _ := floorCommand(b, "stdio")
	arms := []valgrindArm{
		{"stdio", "direct", "add", "", []string{bin, "builtin", "calculator"}},
		{"stdio", "floor", "add", "stdio", []string{floorExe, bin, "builtin", "calculator"}},
		{"stdio", "proxy", "calculator_add", "", []string{bin, "serve", "--config", child, "--log-level", "error"}},
		{"http", "direct", "add", "", []string{bin, "builtin", "calculator", "--http", "127.0.0.1:0"}},
		{"http", "floor", "add", "http", []string{floorExe, calcURL}},
		{"http", "proxy", "calculator_add", "", []string{bin, "serve", "--http", "127.0.0.1:0", "--config", remote, "--log-level", "info"}},
	}
	if base := baseBinary(b); base != "" {
		arms = append(arms,
			valgrindArm{"stdio", "base", "calculator_add", "", []string{base, "serve", "--config", child, "--log-level", "error"}},
			valgrindArm{"http", "base", "calculator_add", "", []string{base, "serve", "--http", "127.0.0.1:0", "--config", remote, "--log-level", "info"}})
	}
	for _, era := range []string{sessionEra, statelessEra} {
		for _, arm := range arms {
			b.Run(fmt.Sprintf("%s/%s/%s", era, arm.transport, arm.name), func(b *testing.B) {
				few := calls / 5
				per := make([]float64, instructionRounds)
				for r := range per {
					i1 := arm.instructions(b, valgrind, dir, era, few)
					i2 := arm.instructions(b, valgrind, dir, era, calls)
					per[r] = float64(i2-i1) / float64(calls-few)
				}
				slices.Sort(per)
				b.ReportMetric(per[len(per)/2], "instr/call")
				b.ReportMetric(per[0], "min_instr/call")
				b.ReportMetric(per[len(per)-1], "max_instr/call")
			})
		}
	}
}

// instructionRounds is how many times BenchmarkInstructions counts each
// arm, for a median that one round's swing does not move.
const instructionRounds = 3

// valgrindArm is one process BenchmarkInstructions measures: argv under
// valgrind, with floorEnvVar set to floor when it is not "".
type valgrindArm struct {
	transport, name, tool, floor string
	argv                         []string
}

// instructions starts the arm's process under cachegrind, makes calls
// calls one at a time (after one that is not counted, as in BenchmarkCall,
// though the process's count includes it in both runs), lets the process
// exit, and returns the instructions cachegrind counted in it.
func (a valgrindArm) instructions(b *testing.B, valgrind, dir, era string, calls int) int64 {
	out := filepath.Join(b.TempDir(), "cachegrind.out")
	argv := append([]string{"--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=" + out}, a.argv...)
	// Valgrind fails on the signals of Go's asynchronous preemption;
	// without it a goroutine yields only at function calls, which moves
	// no instruction count.
	extra := []string{"GODEBUG=asyncpreemptoff=1"}
	if a.floor != "" {
		extra = append(extra, floorEnvVar+"="+a.floor)
	}
	kept := &lasting{TB: b}
	var c *client.Client
	var exited func() error
	if a.transport == "http" {
		url, _ := startHTTPServer(kept, dir, extra, valgrind, argv...)
		c = httpClientEra(kept, url+"/mcp", era)
		exited = func() error { kept.end(); return nil }
	} else {
		c, exited = stdioUnderValgrind(kept, append(isolatedEnv(dir, "NO_COLOR=1"), extra...), era, valgrind, argv)
	}
	for range calls + 1 {
		if res, err := c.CallTool(b.Context(), addRequest(a.tool)); err != nil || res.IsError {
			b.Fatalf("%s: %v %v", a.tool, err, res)
		}
	}
	c.Close()
	if err := exited(); err != nil {
		b.Logf("%s under valgrind: %v", a.argv[0], err)
	}
	kept.end()
	n, err := valgrindTotal(out)
	if err != nil {
		b.Fatal(err)
	}
	return n
}

// stdioUnderValgrind starts valgrind with argv as a stdio MCP server and
// initializes a client of era; exited closes the server's input and waits
// for it to exit, as valgrind writes its counts only then.
func stdioUnderValgrind(tb testing.TB, env []string, era, valgrind string, argv []string) (*client.Client, func() error) {
	cmd := exec.Command(valgrind, argv...)
	cmd.Env = env
	cmd.Stderr = io.Discard
	stdin, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	exited := sync.OnceValue(func() error {
		stdin.Close()
		select {
		case err := <-waited:
			return err
		case <-time.After(5 * time.Minute):
			cmd.Process.Kill()
			return fmt.Errorf("did not exit within 5 minutes of its input closing: %v", <-waited)
		}
	})
	tb.Cleanup(func() { exited() })
	c := client.NewClient(transport.NewIO(stdout, stdin, nil), client.WithProtocolVersion(era))
	ctx := context.WithoutCancel(tb.Context())
	if err := c.Start(ctx); err != nil {
		tb.Fatal(err)
	}
	initCtx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	if _, err := c.Initialize(initCtx, mcp.InitializeRequest{}); err != nil {
		tb.Fatal(err)
	}
	return c, exited
}

// valgrindTotal is the instruction count (the "summary:" or "totals:"
// line) of a cachegrind or callgrind output file.
func valgrindTotal(path string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("valgrind output: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		for _, key := range []string{"summary: ", "totals: "} {
			if v, ok := strings.CutPrefix(line, key); ok {
				return strconv.ParseInt(strings.Fields(v)[0], 10, 64)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("valgrind output %s: %w", path, err)
	}
	return 0, fmt.Errorf("valgrind output %s: no summary line", path)
}
