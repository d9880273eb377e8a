package main

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/mcp-router/mcp-router/internal/fakeupstream"
)

// gateway is the built binary serving stdio with one upstream, as an MCP
// client runs it.
type servedBinary struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan string
	stderr *lockedBuffer
	exited chan error
}

// serveBinary serves profile (a YAML profiles section) from the built
// binary and initializes the session.
func serveBinary(t *testing.T, profile string, flags ...string) *servedBinary {
	t.Helper()
	bin := buildBinary(t)
	cfg := writeFile(t, t.TempDir(), "p.yaml", profile)
	cmd := exec.Command(bin, append([]string{"serve", "--config", cfg, "--log-level", "debug"}, flags...)...)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	g := &servedBinary{cmd: cmd, stdin: stdin, lines: make(chan string, 100), stderr: &lockedBuffer{}, exited: make(chan error, 1)}
	cmd.Stderr = g.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(g.lines)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			g.lines <- sc.Text()
		}
	}()
	go func() { g.exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-g.exited
	})
	if len(flags) > 0 {
		return g // served over HTTP
	}
	// As the spec has it, the client waits for initialize's answer.
	g.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	timeout := time.After(30 * time.Second)
	for answered := false; !answered; {
		select {
		case line, ok := <-g.lines:
			if !ok {
				t.Fatalf("stdout closed before initialize was answered; stderr:\n%s", g.stderr)
			}
			answered = strings.HasPrefix(line, `{"jsonrpc":"2.0","id":1,`)
		case <-timeout:
			t.Fatalf("initialize was not answered; stderr:\n%s", g.stderr)
		}
	}
	go func() {
		for range g.lines { // the rest is not read
		}
	}()
	g.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return g
}

func (g *servedBinary) send(msg string) { io.WriteString(g.stdin, msg+"\n") }

// waitFile waits until path holds text containing want, or fails.
func waitFile(t *testing.T, g *servedBinary, path, want string, within time.Duration) string {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		b, _ := os.ReadFile(path)
		if strings.Contains(string(b), want) {
			return string(b)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never held %q (it holds %q); gateway stderr:\n%s", path, want, b, g.stderr)
		}
		select {
		case <-time.After(20 * time.Millisecond):
		case err := <-g.exited:
			g.exited <- err
			t.Fatalf("the gateway exited (%v) while waiting for %s; stderr:\n%s", err, path, g.stderr)
		}
	}
}

// TestLifecycleSIGTERMCancelsCallsInFlight: SIGTERM with calls in flight
// sends notifications/cancelled for each to the upstream, and the gateway
// exits 0 within its shutdown window.
func TestLifecycleSIGTERMCancelsCallsInFlight(t *testing.T) {
	exe, _ := fakeupstream.Command("slow")
	dir := t.TempDir()
	seen := filepath.Join(dir, "upstream-stdin")
	// tee keeps what the gateway writes to the upstream.
	g := serveBinary(t, fmt.Sprintf(
		"profiles:\n  default:\n    upstreams:\n      slow: {command: sh, args: [-c, 'tee \"$SEEN\" | \"$FAKE\"'], env: {SEEN: %q, FAKE: %q, %s: slow}}\n",
		seen, exe, fakeupstream.EnvVar))
	for id := 2; id <= 3; id++ {
		g.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"call_tool","arguments":{"name":"slow_hang","arguments":{}}}}`, id))
	}
	text := waitFile(t, g, seen, `"name":"hang"`, 20*time.Second)
	for strings.Count(text, `"name":"hang"`) < 2 {
		text = waitFile(t, g, seen, `"name":"hang"`, 20*time.Second)
	}
	g.sigtermExits(t, 10*time.Second)
	b, _ := os.ReadFile(seen)
	if n := strings.Count(string(b), "notifications/cancelled"); n < 2 {
		t.Errorf("the upstream saw %d notifications/cancelled, want one per call in flight (2); it saw:\n%s", n, b)
	}
}

// alive says whether pid is a process that has not ended (a zombie has).
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i > 0 && i+2 < len(s) && s[i+2] != 'Z'
}

// TestLifecycleGrandchildrenDieWithTheGateway: a process that a stdio
// upstream starts in a session of its own (setsid, out of the upstream's
// process group) is gone after the gateway stops, whether it stops
// normally (stdin closed) or is killed with SIGKILL.
func TestLifecycleGrandchildrenDieWithTheGateway(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the subreaper and the watchdog are Linux-only")
	}
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("no setsid command")
	}
	exe, _ := fakeupstream.Command("parent")
	for _, how := range []string{"stdin closed", "SIGKILL"} {
		t.Run(how, func(t *testing.T) {
			pidFile := filepath.Join(t.TempDir(), "pid")
			g := serveBinary(t, fmt.Sprintf(
				"profiles:\n  default:\n    upstreams:\n      parent: {command: sh, args: [-c, 'setsid sh -c \"echo \\$\\$ > $PIDFILE; exec sleep 300\" & exec \"$FAKE\"'], env: {PIDFILE: %q, FAKE: %q, %s: parent}}\n",
				pidFile, exe, fakeupstream.EnvVar))
			// The pid file of the child that connected: a first attempt that
			// failed under load has its grandchild killed with it.
			for deadline := time.Now().Add(20 * time.Second); !strings.Contains(g.stderr.String(), "upstream connected"); {
				if time.Now().After(deadline) {
					t.Fatalf("the upstream never connected; stderr:\n%s", g.stderr)
				}
				<-time.After(20 * time.Millisecond) // polls another process: no clock to fake
			}
			text := strings.TrimSpace(waitFile(t, g, pidFile, "\n", 20*time.Second))
			pid, err := strconv.Atoi(text)
			if err != nil {
				t.Fatalf("pid file: %q", text)
			}
			t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
			if !alive(pid) {
				t.Fatalf("the grandchild %d is not running; stderr:\n%s", pid, g.stderr)
			}
			if sid, _ := unix.Getsid(pid); sid != pid {
				t.Fatalf("the grandchild %d is not in a session of its own (sid %d)", pid, sid)
			}
			if how == "SIGKILL" {
				g.cmd.Process.Kill()
			} else {
				g.stdin.Close()
			}
			err = <-g.exited
			g.exited <- err
			if how != "SIGKILL" && err != nil {
				t.Errorf("the gateway exited with %v; stderr:\n%s", err, g.stderr)
			}
			deadline := time.Now().Add(10 * time.Second)
			for alive(pid) && time.Now().Before(deadline) {
				<-time.After(20 * time.Millisecond) // polls another process: no clock to fake
			}
			if alive(pid) {
				t.Errorf("the grandchild %d outlived the gateway (%s); stderr:\n%s", pid, how, g.stderr)
			}
		})
	}
}

// TestLifecycleSIGTERMCancelsHTTPCallsInFlight: serving HTTP, SIGTERM
// with a call in flight and a client's event stream open cancels the
// call upstream, answers its POST with the call's result (as stdio
// answers it), and exits 0 within the shutdown window, without waiting
// for the open stream; in either protocol era.
func TestLifecycleSIGTERMCancelsHTTPCallsInFlight(t *testing.T) {
	for _, era := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(era, func(t *testing.T) { sigtermWithHTTPCallInFlight(t, era) })
	}
}

func sigtermWithHTTPCallInFlight(t *testing.T, era string) {
	exe, _ := fakeupstream.Command("slow")
	seen := filepath.Join(t.TempDir(), "upstream-stdin")
	g := serveBinary(t, fmt.Sprintf(
		"profiles:\n  default:\n    upstreams:\n      slow: {command: sh, args: [-c, 'tee \"$SEEN\" | \"$FAKE\"'], env: {SEEN: %q, FAKE: %q, %s: slow}}\n",
		seen, exe, fakeupstream.EnvVar), "--http", "127.0.0.1:0")
	url := ""
	deadline := time.Now().Add(30 * time.Second)
	for url == "" && time.Now().Before(deadline) {
		if _, rest, ok := strings.Cut(g.stderr.String(), "serving streamable HTTP url="); ok {
			url, _, _ = strings.Cut(rest, "\n")
			url = strings.Trim(strings.TrimSpace(url), `"`)
		}
		<-time.After(20 * time.Millisecond) // polls another process: no clock to fake
	}
	if url == "" {
		t.Fatalf("no address in the log:\n%s", g.stderr)
	}
	post := func(session, body string) (*http.Response, error) {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
		}
		if session != "" || era != "2025-11-25" {
			req.Header.Set("Mcp-Protocol-Version", era)
		}
		if era != "2025-11-25" { // the stateless era names the call in headers too
			req.Header.Set("Mcp-Method", "tools/call")
			req.Header.Set("Mcp-Name", "slow_hang")
		}
		return http.DefaultClient.Do(req)
	}
	call := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow_hang","arguments":{},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}`
	session := ""
	if era == "2025-11-25" {
		resp, err := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		session = resp.Header.Get("Mcp-Session-Id")
		if resp, err := post(session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); err == nil {
			resp.Body.Close()
		}
		stream, _ := http.NewRequest(http.MethodGet, url, nil)
		stream.Header.Set("Accept", "text/event-stream")
		stream.Header.Set("Mcp-Session-Id", session)
		stream.Header.Set("Mcp-Protocol-Version", era)
		if resp, err := http.DefaultClient.Do(stream); err == nil {
			t.Cleanup(func() { resp.Body.Close() })
		}
		call = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"call_tool","arguments":{"name":"slow_hang","arguments":{}}}}`
	}
	type answer struct {
		status int
		body   string
		err    error
	}
	callDone := make(chan answer, 1)
	go func() {
		resp, err := post(session, call)
		if err != nil {
			callDone <- answer{err: err}
			return
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		callDone <- answer{resp.StatusCode, string(b), err}
	}()
	waitFile(t, g, seen, `"name":"hang"`, 20*time.Second)
	g.sigtermExits(t, 5*time.Second)
	got := <-callDone
	if got.err != nil || got.status != http.StatusOK || !strings.Contains(got.body, `{"jsonrpc":"2.0","id":2,"result":`) ||
		!strings.Contains(got.body, "cancelled") {
		t.Errorf("the call's POST got status %d, body %q, err %v; want 200 with its JSON-RPC result saying it was cancelled",
			got.status, got.body, got.err)
	}
	b, _ := os.ReadFile(seen)
	if !strings.Contains(string(b), "notifications/cancelled") {
		t.Errorf("the upstream saw no notifications/cancelled; it saw:\n%s", b)
	}
}

// sigtermExits sends the gateway SIGTERM and fails the test unless it
// exits 0 within window (its shutdown window).
func (g *servedBinary) sigtermExits(t *testing.T, window time.Duration) {
	t.Helper()
	start := time.Now()
	if err := g.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-g.exited:
		g.exited <- err
		if err != nil {
			t.Errorf("after SIGTERM the gateway exited with %v, want 0; stderr:\n%s", err, g.stderr)
		}
		if d := time.Since(start); d > window {
			t.Errorf("the gateway took %s to exit", d)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("the gateway did not exit within 20s of SIGTERM; stderr:\n%s", g.stderr)
	}
}
