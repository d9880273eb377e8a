package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// BenchmarkStartup measures, with the built binary as an MCP client runs
// it, the time from starting `mcp-router serve` to its answer to
// initialize, whatever the upstreams do: one that hangs (a child that
// never answers), and four real npm servers started cold (everything,
// filesystem, memory, everything again; skipped without node_modules).
// It reports ms_p50 and ms_max to initialize, and, where every upstream
// connects, ms_all_connected (the median) for comparison. scripts/startup
// prints them as a table.
func BenchmarkStartup(b *testing.B) {
	bin := buildBinary(b)
	dir := b.TempDir()
	b.Run("hung", func(b *testing.B) {
		cfg := writeFile(b, dir, "hung.yaml", "profiles:\n  default:\n    upstreams:\n"+
			"      calculator: {builtin: calculator}\n      hung: {command: sleep, args: [\"1000\"]}\n")
		benchStartup(b, bin, cfg, 0)
	})
	b.Run("npm4", func(b *testing.B) {
		mods, err := filepath.Abs(filepath.Join("..", "..", "node_modules", ".bin"))
		if err != nil {
			b.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(mods, "mcp-server-everything")); err != nil {
			b.Skip("npm servers not installed (run npm ci at the repository root)")
		}
		cfg := writeFile(b, dir, "npm4.yaml", fmt.Sprintf(`profiles:
  default:
    upstreams:
      everything: {command: %[1]q}
      everything2: {command: %[1]q}
      filesystem: {command: %[2]q, args: [%[4]q]}
      memory: {command: %[3]q, env: {MEMORY_FILE_PATH: %[5]q}}
`, filepath.Join(mods, "mcp-server-everything"), filepath.Join(mods, "mcp-server-filesystem"),
			filepath.Join(mods, "mcp-server-memory"), dir, filepath.Join(dir, "memory.jsonl")))
		benchStartup(b, bin, cfg, 4)
	})
}

// benchStartup starts serve b.N times; upstreams is how many "upstream
// connected" lines mean all are in (0: do not wait for them).
func benchStartup(b *testing.B, bin, cfg string, upstreams int) {
	var toInit, toAll []time.Duration
	for b.Loop() {
		init, all := startOnce(b, bin, cfg, upstreams)
		toInit = append(toInit, init)
		if all > 0 {
			toAll = append(toAll, all)
		}
	}
	b.ReportMetric(ms(median(toInit)), "ms_p50")
	b.ReportMetric(ms(slicesMax(toInit)), "ms_max")
	if len(toAll) > 0 {
		b.ReportMetric(ms(median(toAll)), "ms_all_connected")
	}
}

// startOnce runs serve once: the time to initialize's answer and, when
// upstreams > 0, to the last upstream connected (0 if not within 60s).
func startOnce(b *testing.B, bin, cfg string, upstreams int) (toInit, toAll time.Duration) {
	cmd := exec.Command(bin, "serve", "--config", cfg, "--log-level", "info")
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	stderr, _ := cmd.StderrPipe()
	start := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }() // children die with it (Pdeathsig)
	connected := make(chan time.Duration, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		n := 0
		for sc.Scan() {
			if strings.Contains(sc.Text(), "upstream connected") {
				if n++; n == upstreams {
					connected <- time.Since(start)
				}
			}
		}
	}()
	io.WriteString(stdin, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`+"\n")
	line, err := bufio.NewReader(stdout).ReadString('\n')
	toInit = time.Since(start)
	if err != nil || !strings.Contains(line, `"id":1`) || !strings.Contains(line, `"result"`) {
		b.Fatalf("initialize: %v %q", err, line)
	}
	if upstreams > 0 {
		select {
		case toAll = <-connected:
		case <-time.After(60 * time.Second):
		}
	}
	return toInit, toAll
}

func median(d []time.Duration) time.Duration {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

func slicesMax(d []time.Duration) time.Duration {
	m := d[0]
	for _, x := range d {
		m = max(m, x)
	}
	return m
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
