package proxy

// The fault injection cases of docs/reliability.md: one test per case
// not covered elsewhere, named by its ID. Elsewhere: FI-03, FI-08, FI-09, FI-11 and FI-15 in
// resilience_test.go, FI-12 in guard_test.go, FI-16 in vet_test.go, FI-17
// in server_test.go, FI-22 in executor (TestRunUpstreamCrashInHybridPlan).
//
// A check the gateway fails today runs under faultBug, skipped with the
// bug described, so that it passes once the bug is fixed; a behaviour the
// gateway does not have at all is skipped as NOT IMPLEMENTED.
//
// No test here is parallel: the timing bounds assume an otherwise idle
// process.

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"go.uber.org/goleak"

	"github.com/mcp-router/mcp-router/internal/fakeupstream"
	"github.com/mcp-router/mcp-router/proxy/call"
	"github.com/mcp-router/mcp-router/proxy/internal/upstream"
)

// faultWait bounds every wait for something that should happen at once.
const faultWait = 5 * time.Second

// faultBug runs check, which asserts what docs/reliability.md expects, as a
// subtest skipped while bug stands.
func faultBug(t *testing.T, name, bug string, check func(t *testing.T)) {
	t.Helper()
	t.Run(name, func(t *testing.T) {
		t.Skip("BUG: " + bug)
		check(t)
	})
}

// faultBuiltins serves the built-in upstreams of these tests: "tools"
// (a server named args[0] with the tools named in args[1:], each
// answering "<tool> from <server>"), "ticker" (tickerServer), and
// otherwise a fake upstream named like the builtin, as fakeBuiltins.
func faultBuiltins(name string, args []string) (*server.MCPServer, error) {
	switch name {
	case "tools":
		s := server.NewMCPServer(args[0], "1", server.WithToolCapabilities(true))
		for _, tool := range args[1:] {
			text := tool + " from " + args[0]
			s.AddTool(mcp.NewTool(tool, mcp.WithDescription("Answers "+text)),
				func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
					return mcp.NewToolResultText(text), nil
				})
		}
		return s, nil
	case "ticker":
		return tickerServer(), nil
	default:
		return fakeupstream.New(name), nil
	}
}

// toolsUpstream is a built-in upstream offering the named tools.
func toolsUpstream(name, prefix string, tools ...string) UpstreamConfig {
	return UpstreamConfig{Name: name, Transport: TransportBuiltin, Builtin: "tools",
		Args: append([]string{name}, tools...), Prefix: prefix}
}

// tickerServer offers slow {ticks, every_ms}: it reports progress after
// each of ticks intervals of every_ms, and answers one interval after the
// last (mcp-go sends notifications apart from responses, so a report sent
// just before the answer may arrive after it) (FI-06); and cancellations:
// how many slow calls ended cancelled.
func tickerServer() *server.MCPServer {
	s := server.NewMCPServer("ticker", "1", server.WithToolCapabilities(true))
	var cancelled atomic.Int64
	s.AddTool(mcp.NewTool("slow", mcp.WithDescription("Answer slowly, with progress"),
		mcp.WithNumber("ticks", mcp.Required()), mcp.WithNumber("every_ms", mcp.Required())),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			ticks, every := int(req.GetFloat("ticks", 1)), time.Duration(req.GetFloat("every_ms", 0))*time.Millisecond
			tick := time.NewTicker(every)
			defer tick.Stop()
			for i := 1; i <= ticks+1; i++ {
				select {
				case <-tick.C:
				case <-ctx.Done():
					cancelled.Add(1)
					return nil, ctx.Err()
				}
				if i <= ticks && req.Params.Meta != nil && req.Params.Meta.ProgressToken != nil {
					_ = server.ServerFromContext(ctx).SendNotificationToClient(ctx, string(mcp.MethodNotificationProgress),
						map[string]any{"progressToken": req.Params.Meta.ProgressToken, "progress": i, "total": ticks})
				}
			}
			return mcp.NewToolResultText(fmt.Sprintf("done after %d ticks", ticks)), nil
		})
	s.AddTool(mcp.NewTool("cancellations", mcp.WithDescription("Count cancelled slow calls")),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText(strconv.FormatInt(cancelled.Load(), 10)), nil
		})
	return s
}

// newFaultHub is a hub on faultBuiltins with fast retries, not yet
// started, closed when the test ends.
func newFaultHub(t *testing.T, opts Options) *Hub {
	t.Helper()
	opts.Builtin = faultBuiltins
	opts.InitTimeout = cmp.Or(opts.InitTimeout, faultWait)
	return newTestHub(t, opts)
}

// wantKind fails the test unless err is an *UpstreamError of kind want.
func wantKind(t *testing.T, what string, err error, want Kind) *UpstreamError {
	t.Helper()
	var ue *UpstreamError
	if !errors.As(err, &ue) || ue.Kind != want {
		t.Fatalf("%s: got %v, want %s", what, err, want)
	}
	return ue
}

func statusOf(h *Hub, name string) Status {
	i := slices.IndexFunc(h.Status(), func(s Status) bool { return s.Name == name })
	return h.Status()[i]
}

func cancellations(t *testing.T, h *Hub, tool string) int {
	t.Helper()
	n, err := strconv.Atoi(callText(t, h, tool, nil))
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	return n
}

// FI-01: a stdio upstream that dies with three calls in flight fails all
// three at once with upstream_unavailable and retries none of them (each
// reached the upstream once: a retried hang would report its arrival
// again, and never end); the other upstream is not disturbed; the child
// is restarted once, and the unchanged tool set sends no list_changed.
func TestFI01CrashMidCallFailsAllInFlight(t *testing.T) {
	h := startHub(t, stdioFake("alpha"), stdioFake("beta"))
	alphaPID, betaPID := callText(t, h, "alpha_pid", nil), callText(t, h, "beta_pid", nil)
	var changes atomic.Int32
	h.Follow(func(*Catalog) { changes.Add(1) })
	changes.Store(0) // Follow's first call: the catalog as it is

	const inFlight = 3
	type outcome struct {
		err error
		at  time.Time
	}
	var arrivals [inFlight]atomic.Int32
	arrived, results := make(chan int, inFlight), make(chan outcome, inFlight)
	for i := range inFlight {
		go func() {
			// hang reports progress once it has the call.
			_, err := h.CallTool(t.Context(), "alpha_hang", nil, func(Progress) {
				if arrivals[i].Add(1) == 1 {
					arrived <- i
				}
			})
			results <- outcome{err, time.Now()}
		}()
	}
	for range inFlight {
		select {
		case <-arrived:
		case <-time.After(faultWait):
			t.Fatal("the hang calls did not all reach alpha")
		}
	}
	beta := make(chan error, 1)
	go func() {
		res, err := h.CallTool(t.Context(), "beta_sleep", map[string]any{"ms": 300}, nil)
		if err == nil && res.IsError {
			err = errors.New("isError result")
		}
		beta <- err
	}()

	sent := time.Now()
	_, err := h.CallTool(t.Context(), "alpha_crash", nil, nil)
	exited := time.Now()
	wantKind(t, "the call that crashed alpha", err, call.KindUnavailable)
	if d := exited.Sub(sent); d > time.Second {
		t.Errorf("the crashing call failed after %s, want within 1s", d)
	}
	for range inFlight {
		select {
		case o := <-results:
			ue := wantKind(t, "a call in flight when alpha died", o.err, call.KindUnavailable)
			if ue.Upstream != "alpha" {
				t.Errorf("error names upstream %q, want alpha", ue.Upstream)
			}
			if d := o.at.Sub(exited); d > time.Second {
				t.Errorf("a call in flight failed %s after alpha died, want within 1s", d)
			}
		case <-time.After(faultWait):
			t.Fatalf("a call in flight when alpha died was still waiting %s later", faultWait)
		}
	}
	if got := callText(t, h, "beta_echo", map[string]any{"text": "meanwhile"}); got != "meanwhile" {
		t.Errorf("beta while alpha restarts: got %q", got)
	}
	select {
	case err := <-beta:
		if err != nil {
			t.Errorf("a beta call across alpha's crash: %v", err)
		}
	case <-time.After(faultWait):
		t.Fatal("a beta call across alpha's crash never returned")
	}

	eventually(t, 10*time.Second, "alpha restarted", func() bool {
		res, err := h.CallTool(t.Context(), "alpha_pid", nil, nil)
		return err == nil && !res.IsError && mcp.GetTextFromContent(res.Content[0]) != alphaPID
	})
	for i := range arrivals {
		if n := arrivals[i].Load(); n != 1 {
			t.Errorf("hang call %d reached alpha %d times, want once (no retry)", i, n)
		}
	}
	if s := statusOf(h, "alpha"); s.Restarts != 1 || s.State != StateConnected {
		t.Errorf("alpha after the crash: %+v, want connected after 1 restart (a retried crash call restarts it again)", s)
	}
	if got := callText(t, h, "beta_pid", nil); got != betaPID {
		t.Errorf("beta restarted (pid %s, was %s)", got, betaPID)
	}
	if n := changes.Load(); n != 0 {
		t.Errorf("%d catalog changes announced across the restart, want none (the tool set is unchanged)", n)
	}
}

// cutter serves next, but answers a POST whose JSON-RPC params carry
// arguments.text naming one of cutReplies with that raw reply on a
// hijacked connection, then closes it: a response broken off mid-way.
type cutter struct {
	next http.Handler
}

// cutReplies are raw HTTP responses broken off mid-way, by the text
// argument that triggers them, formatted with the request's id, the
// length of its unfinishedEvent and the event. Each carries a
// well-formed result "partial", which must never reach the caller.
var cutReplies = map[string]string{
	// The body stops short of its Content-Length.
	"cut-json": "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 400\r\n\r\n" +
		`{"jsonrpc":"2.0","id":%[1]s,"result":{"content":[{"type":"text","text":"partial"}]}`,
	// A chunked SSE stream stops inside an event (no blank line ends it)
	// and before its last chunk.
	"cut-sse-chunk": "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n" +
		"%[2]x\r\n%[3]s\r\n",
	// An SSE stream delimited by the connection stops inside an event.
	"cut-sse-event": "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n%[3]s",
}

// unfinishedEvent is an SSE event with a complete data line but without
// the blank line that dispatches it.
func unfinishedEvent(id string) string {
	return `event: message` + "\n" +
		`data: {"jsonrpc":"2.0","id":` + id + `,"result":{"content":[{"type":"text","text":"partial"}]}}` + "\n"
}

func (c cutter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id, text, ok := postedCall(w, r)
	if !ok {
		return
	}
	reply, ok := cutReplies[text]
	if !ok {
		c.next.ServeHTTP(w, r)
		return
	}
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	defer conn.Close()
	event := unfinishedEvent(string(id))
	fmt.Fprintf(conn, reply, id, len(event), event)
}

// postedCall reads the id and the text argument of a POSTed call, and
// leaves the body for the next handler to read; any other request has no
// text, so the caller passes it on. It answers 400 and returns false when
// the body cannot be read.
func postedCall(w http.ResponseWriter, r *http.Request) (id json.RawMessage, text string, ok bool) {
	if r.Method != http.MethodPost {
		return nil, "", true
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return nil, "", false
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Params struct {
			Arguments struct {
				Text string `json:"text"`
			} `json:"arguments"`
		} `json:"params"`
	}
	_ = json.Unmarshal(body, &msg)
	return msg.ID, msg.Params.Arguments.Text, true
}

// FI-02: an HTTP upstream whose response breaks off mid-way fails that
// call at once with upstream_unavailable, never with the partial result,
// and the next call goes through.
func TestFI02HTTPResponseCutMidway(t *testing.T) {
	mcpHandler := server.NewStreamableHTTPServer(fakeupstream.New("remote"))
	ts := httptest.NewServer(cutter{next: mcpHandler})
	t.Cleanup(ts.Close)
	t.Cleanup(func() { mcpHandler.Shutdown(context.Background()) })
	h := startHub(t, UpstreamConfig{Name: "remote", Transport: TransportStreamableHTTP, URL: ts.URL + "/mcp", Prefix: "remote_"})

	check := func(t *testing.T, cut string) {
		start := time.Now()
		res, err := h.CallTool(t.Context(), "remote_echo", map[string]any{"text": cut}, nil)
		if res != nil {
			t.Fatalf("a response cut mid-way gave a result: %v", res.Content)
		}
		ue := wantKind(t, "a response cut mid-way", err, call.KindUnavailable)
		if ue.Upstream != "remote" || ue.Tool != "remote_echo" {
			t.Errorf("error names %s on %s, want remote_echo on remote", ue.Tool, ue.Upstream)
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("the cut call failed after %s, want at once", d)
		}
		if got := callText(t, h, "remote_echo", map[string]any{"text": "after " + cut}); got != "after "+cut {
			t.Errorf("the next call: got %q", got)
		}
	}
	// cut-sse-event: mcp-go's SSE reader would dispatch the unfinished
	// event at the end of the stream; wire.ReplyGuard ends such a stream with
	// io.ErrUnexpectedEOF, so the event is dropped.
	for _, cut := range []string{"cut-json", "cut-sse-chunk", "cut-sse-event"} {
		t.Run(cut, func(t *testing.T) { check(t, cut) })
	}
}

// timeoutUpstreams are the transports FI-04 and FI-07 run over, with
// the bug that keeps a check of the kind from passing, if any.
var timeoutUpstreams = []struct {
	name string
	up   func(string) UpstreamConfig
	bug  string
}{{"stdio", stdioFake, ""}, {"builtin", builtinFake, ""}}

// checkTimeout calls tool with a per-call timeout of 300ms and checks that
// it fails with upstream_timeout at about 300ms, that the upstream saw the
// cancellation, and that the connection survived the late answer.
func checkTimeout(t *testing.T, up UpstreamConfig, bug, tool string, args map[string]any) {
	const timeout = 300 * time.Millisecond
	up.Timeout = timeout
	h := startHub(t, up)
	pid := callText(t, h, "alpha_pid", nil)
	start := time.Now()
	_, err := h.CallTool(t.Context(), tool, args, nil)
	d := time.Since(start)
	if err == nil {
		t.Fatalf("%s with a %s timeout succeeded", tool, timeout)
	}
	if d < timeout || d > timeout+400*time.Millisecond {
		t.Errorf("timed out after %s, want about %s", d, timeout)
	}
	kind := func(t *testing.T) {
		ue := wantKind(t, tool+" with a 300ms timeout", err, call.KindTimeout)
		if !strings.Contains(ue.Error(), "no answer within "+timeout.String()) {
			t.Errorf("timeout error %q does not say the limit", ue)
		}
	}
	if bug == "" {
		kind(t)
	} else {
		faultBug(t, "kind", bug, kind)
	}
	eventually(t, faultWait, "alpha to see the cancellation", func() bool { return cancellations(t, h, "alpha_cancellations") == 1 })
	if got := callText(t, h, "alpha_pid", nil); got != pid {
		t.Errorf("alpha restarted after a timeout (pid %s, was %s)", got, pid)
	}
}

// FI-04: a call the upstream never answers fails with upstream_timeout at
// the per-call timeout; the upstream is told (notifications/cancelled
// over stdio, the context in process) and the connection survives the
// late answer.
func TestFI04HangTimesOutAndCancelsUpstream(t *testing.T) {
	for _, tc := range timeoutUpstreams {
		t.Run(tc.name, func(t *testing.T) { checkTimeout(t, tc.up("alpha"), tc.bug, "alpha_hang", nil) })
	}
}

// FI-04: timeouts in a row, with no answer in between, eject the
// upstream (it is restarted); one answer resets the count.
func TestFI04ConsecutiveTimeoutsEjectTheUpstream(t *testing.T) {
	up := stdioFake("alpha")
	up.Timeout = 100 * time.Millisecond
	h := startHub(t, up)
	pid := callText(t, h, "alpha_pid", nil)
	hang := func(n int) {
		t.Helper()
		for range n {
			_, err := h.CallTool(t.Context(), "alpha_hang", nil, nil)
			wantKind(t, "alpha_hang", err, call.KindTimeout)
		}
	}
	hang(upstream.MaxTimeouts - 1)
	if got := callText(t, h, "alpha_pid", nil); got != pid {
		t.Fatalf("alpha restarted after %d timeouts (pid %s, was %s), want %d in a row", upstream.MaxTimeouts-1, got, pid, upstream.MaxTimeouts)
	}
	// That answer reset the count.
	hang(upstream.MaxTimeouts - 1)
	if got := callText(t, h, "alpha_pid", nil); got != pid {
		t.Fatalf("alpha restarted though an answer came between the timeouts (pid %s, was %s)", got, pid)
	}
	hang(upstream.MaxTimeouts)
	eventually(t, faultWait, "alpha restarted after timeouts in a row", func() bool {
		res, err := h.CallTool(t.Context(), "alpha_pid", nil, nil)
		return err == nil && !res.IsError && mcp.GetTextFromContent(res.Content[0]) != pid
	})
}

// FI-05: an upstream that never answers initialize is given up after
// InitTimeout: Start returns, the other upstream's tools are listed and
// served (to clients too), and the hung one is reported failed.
func TestFI05HungInitializeDoesNotBlockStart(t *testing.T) {
	never := make(chan struct{})
	silent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-never:
		}
	}))
	t.Cleanup(silent.Close)
	t.Cleanup(func() { close(never) })
	cases := []struct {
		name string
		up   UpstreamConfig
	}{
		// Reads its stdin, never writes, and ends at EOF.
		{"stdio", UpstreamConfig{Name: "hung", Transport: TransportStdio, Command: "sh", Args: []string{"-c", "cat >/dev/null"}, Prefix: "hung_"}},
		{"http", UpstreamConfig{Name: "hung", Transport: TransportStreamableHTTP, URL: silent.URL + "/mcp", Prefix: "hung_"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			const initTimeout = 300 * time.Millisecond
			h := newFaultHub(t, Options{Upstreams: []UpstreamConfig{builtinFake("alpha"), tc.up}, InitTimeout: initTimeout})
			start := time.Now()
			if err := h.Start(t.Context()); err != nil {
				t.Fatalf("Start: %v", err)
			}
			// Not before the init timeout; and, whatever the machine's load,
			// well before the default connect limit it would wait without one.
			if d := time.Since(start); d < initTimeout || d >= DefaultConnectTimeout {
				t.Errorf("Start returned after %s, want it back at the init timeout (%s), not the default limit (%s)", d, initTimeout, DefaultConnectTimeout)
			}
			if s := statusOf(h, "hung"); s.State != StateFailed || !strings.Contains(s.Err, "initialize") {
				t.Errorf("hung upstream: %+v, want failed in initialize", s)
			}
			var names []string
			for _, tool := range h.Catalog().Tools {
				names = append(names, tool.Name)
			}
			if !slices.Contains(names, "alpha_echo") || slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, "hung_") }) {
				t.Errorf("catalog: %v, want alpha's tools and none of hung's", names)
			}
			// A client initializes and calls while hung keeps timing out.
			c := overHTTP(t, h)
			if got := resultText(c.call(t, "alpha_echo", map[string]any{"text": "served"})); got != "served" {
				t.Errorf("a client's call: got %q", got)
			}
		})
	}
}

// FI-06: progress keeps a slow call alive: the timeout is an idle
// timeout that each progress report restarts, under a hard maximum at
// which the call fails with upstream_timeout, saying so, and the upstream
// is told as for a timeout. The caller sees its own progress, in order.
func TestFI06ProgressResetsIdleTimeout(t *testing.T) {
	// idle leaves room for a late tick on a loaded machine: 15 intervals.
	const idle, hard = 1500 * time.Millisecond, 3 * time.Second
	overHTTP := func(t *testing.T) UpstreamConfig {
		mcpHandler := server.NewStreamableHTTPServer(tickerServer())
		ts := httptest.NewServer(mcpHandler)
		t.Cleanup(ts.Close)
		t.Cleanup(func() { mcpHandler.Shutdown(context.Background()) })
		return UpstreamConfig{Name: "ticker", Transport: TransportStreamableHTTP, URL: ts.URL + "/mcp"}
	}
	inProcess := func(*testing.T) UpstreamConfig {
		return UpstreamConfig{Name: "ticker", Transport: TransportBuiltin, Builtin: "ticker"}
	}
	for _, tc := range []struct {
		name string
		up   func(*testing.T) UpstreamConfig
	}{{"builtin", inProcess}, {"http", overHTTP}} {
		t.Run(tc.name, func(t *testing.T) {
			up := tc.up(t)
			up.Prefix, up.Timeout, up.MaxTimeout = "ticker_", idle, hard
			h := newFaultHub(t, Options{Upstreams: []UpstreamConfig{up}})
			if err := h.Start(t.Context()); err != nil {
				t.Fatal(err)
			}
			checkProgressKeepsCallAlive(t, h, idle)
			checkHardMaximum(t, h, hard)
		})
	}
}

// progressLog collects the progress a caller sees.
type progressLog struct {
	mu  sync.Mutex
	got []float64
}

func (l *progressLog) add(p Progress) {
	l.mu.Lock()
	l.got = append(l.got, p.Progress)
	l.mu.Unlock()
}

func (l *progressLog) values() []float64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.got)
}

// checkProgressKeepsCallAlive: a 2.1s call with progress every 100ms
// outlives the idle timeout, whether its caller asked for progress or not.
func checkProgressKeepsCallAlive(t *testing.T, h *Hub, idle time.Duration) {
	args := map[string]any{"ticks": 20, "every_ms": 100}
	var log progressLog
	start := time.Now()
	res, err := h.CallTool(t.Context(), "ticker_slow", args, log.add)
	if err != nil || res.IsError {
		t.Fatalf("a 2.1s call with progress every 100ms under a %s idle timeout: %v %v, want its result", idle, err, res)
	}
	if d := time.Since(start); d <= idle {
		t.Errorf("the slow call took %s, not longer than the idle timeout: it proves nothing", d)
	}
	want := make([]float64, 20)
	for i := range want {
		want[i] = float64(i + 1)
	}
	if got := log.values(); !slices.Equal(got, want) {
		t.Errorf("progress: %v, want 1..20", got)
	}
	// The upstream reports progress to a caller that asked for none too:
	// the proxy gives the call a token of its own.
	if got := callText(t, h, "ticker_slow", args); got != "done after 20 ticks" {
		t.Errorf("the slow call without progress: %q", got)
	}
}

// checkHardMaximum: a call whose progress never ends is cut at the hard
// maximum with upstream_timeout; the upstream sees the cancellation and
// the connection stays.
func checkHardMaximum(t *testing.T, h *Hub, hard time.Duration) {
	var log progressLog
	const ticks, every = 1000, 100 * time.Millisecond // the call's own end: 100 s
	start := time.Now()
	_, err := h.CallTool(t.Context(), "ticker_slow", map[string]any{"ticks": ticks, "every_ms": every.Milliseconds()}, log.add)
	d := time.Since(start)
	ue := wantKind(t, "a call with endless progress", err, call.KindTimeout)
	if want := "hard maximum of " + hard.String(); !strings.Contains(ue.Error(), want) {
		t.Errorf("error %q does not say %q", ue, want)
	}
	// Not before the hard maximum; and, whatever the machine's load, well
	// before the call would have ended on its own. The error above says
	// which limit cut it.
	if d < hard || d >= ticks*every {
		t.Errorf("cut after %s, want at the hard maximum (%s), not at the call's own end (%s)", d, hard, ticks*every)
	}
	got := log.values()
	if len(got) < 5 || !slices.IsSorted(got) || got[0] != 1 {
		t.Errorf("progress before the cut: %v, want 1, 2, 3... in order", got)
	}
	eventually(t, faultWait, "the upstream to see the cancellation", func() bool {
		return callText(t, h, "ticker_cancellations", nil) == "1"
	})
}

// FI-07: a slow upstream that sends no progress is cut at the timeout
// and told to stop.
func TestFI07SlowCallTimesOutAndCancelsUpstream(t *testing.T) {
	for _, tc := range timeoutUpstreams {
		t.Run(tc.name, func(t *testing.T) {
			checkTimeout(t, tc.up("alpha"), tc.bug, "alpha_sleep", map[string]any{"ms": 2000})
		})
	}
}

// garbageReplies are HTTP responses that are not MCP, by the text
// argument that triggers them (served by garbler).
var garbageReplies = map[string]struct{ contentType, body string }{
	"invalid-json":       {"application/json", `{"jsonrpc":"2.0","id":`},
	"wrong-content-type": {"text/html", "<html><body>Bad gateway</body></html>"},
	"invalid-sse-data":   {"text/event-stream", "event: message\ndata: {not json\n\n"},
}

// garbler serves next but answers a POST whose arguments.text names one
// of garbageReplies with that reply, status 200.
type garbler struct{ next http.Handler }

func (g garbler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, text, ok := postedCall(w, r)
	if !ok {
		return
	}
	reply, ok := garbageReplies[text]
	if !ok {
		g.next.ServeHTTP(w, r)
		return
	}
	w.Header().Set("Content-Type", reply.contentType)
	io.WriteString(w, reply.body)
}

// FI-10: garbage from an HTTP upstream fails that call at once with
// upstream_protocol_error, naming what was wrong, with no partial result;
// the connection is kept (the upstream is up, only its reply was bad), and
// the next call goes through.
func TestFI10GarbageFromHTTPUpstream(t *testing.T) {
	mcpHandler := server.NewStreamableHTTPServer(fakeupstream.New("remote"))
	ts := httptest.NewServer(garbler{next: mcpHandler})
	t.Cleanup(ts.Close)
	t.Cleanup(func() { mcpHandler.Shutdown(context.Background()) })
	h := startHub(t, UpstreamConfig{Name: "remote", Transport: TransportStreamableHTTP, URL: ts.URL + "/mcp", Prefix: "remote_"})
	why := map[string]string{
		"invalid-json":       "not JSON",
		"wrong-content-type": `content type "text/html"`,
		"invalid-sse-data":   "not JSON",
	}
	for _, name := range slices.Sorted(maps.Keys(garbageReplies)) {
		t.Run(name, func(t *testing.T) {
			start := time.Now()
			res, err := h.CallTool(t.Context(), "remote_echo", map[string]any{"text": name}, nil)
			if res != nil || err == nil {
				t.Fatalf("garbage gave %v, %v; want an error and no result", res, err)
			}
			ue := wantKind(t, name, err, call.KindProtocol)
			if ue.Upstream != "remote" || !strings.Contains(ue.Error(), why[name]) {
				t.Errorf("error %q: want it to name upstream remote and say %q", ue, why[name])
			}
			if d := time.Since(start); d > time.Second {
				t.Errorf("the call failed after %s, want at once", d)
			}
			if got := callText(t, h, "remote_echo", map[string]any{"text": "after " + name}); got != "after "+name {
				t.Errorf("the next call: got %q", got)
			}
		})
	}
	if s := statusOf(h, "remote"); s.Restarts != 0 || s.State != StateConnected {
		t.Errorf("remote after %d garbage replies: %+v, want still on its first connection", len(garbageReplies), s)
	}
}

// FI-13: tool names that would collide at start are a configuration
// error naming both upstreams; default prefixes keep them apart; a name
// that is not a valid tool name is left out with a problem.
func TestFI13DuplicateAndInvalidToolNames(t *testing.T) {
	long := strings.Repeat("x", 60)
	cases := []struct {
		name    string
		ups     []UpstreamConfig
		wantErr []string // substrings of Start's error; nil for none
		collide []string // the upstreams the collision names, keeper first
		tools   []string // the catalog's tools
		problem []string // substrings of the catalog's one problem, if any
		calls   map[string]string
	}{{
		name:  "default prefixes namespace the same name",
		ups:   []UpstreamConfig{toolsUpstream("alpha", "alpha_", "search"), toolsUpstream("beta", "beta_", "search")},
		tools: []string{"alpha_search", "beta_search"},
		calls: map[string]string{"alpha_search": "search from alpha", "beta_search": "search from beta"},
	}, {
		name:    "one prefix for two upstreams",
		ups:     []UpstreamConfig{toolsUpstream("beta", "x_", "search"), toolsUpstream("alpha", "x_", "search")},
		wantErr: []string{`"x_search"`, "alpha", "beta", "prefix"},
		collide: []string{"alpha", "beta"},
		tools:   []string{"x_search"},
		// The keeper is the first upstream by name, whichever connected first.
		calls: map[string]string{"x_search": "search from alpha"},
	}, {
		name:    "a reserved name",
		ups:     []UpstreamConfig{toolsUpstream("sneaky", "", "call_tool", "search")},
		wantErr: []string{`"call_tool"`, "proxy's own tool", "sneaky"},
		collide: []string{"", "sneaky"},
		tools:   []string{"search"},
	}, {
		name:    "a name over 64 characters once prefixed",
		ups:     []UpstreamConfig{toolsUpstream("alpha", "alpha_", long, "ok")},
		tools:   []string{"alpha_ok"},
		problem: []string{"upstream alpha", long, "must match"},
	}, {
		name:    "a name with spaces",
		ups:     []UpstreamConfig{toolsUpstream("alpha", "", "search notes", "ok")},
		tools:   []string{"ok"},
		problem: []string{"upstream alpha", `"search notes"`, "must match"},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newFaultHub(t, Options{Upstreams: tc.ups})
			err := h.Start(t.Context())
			if tc.wantErr == nil && err != nil {
				t.Fatalf("Start: %v, want no error", err)
			}
			if tc.wantErr != nil {
				var ce *CollisionError
				if !errors.As(err, &ce) {
					t.Fatalf("Start: %v, want a *CollisionError", err)
				}
				for _, want := range tc.wantErr {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("collision error %q does not mention %s", err, want)
					}
				}
				if !slices.Equal(ce.Upstreams, tc.collide) {
					t.Errorf("collision names upstreams %q, want %q", ce.Upstreams, tc.collide)
				}
			}
			var names []string
			for _, tool := range h.Catalog().Tools {
				names = append(names, tool.Name)
			}
			if !slices.Equal(names, tc.tools) {
				t.Errorf("catalog: %v, want %v", names, tc.tools)
			}
			problems := h.Catalog().Problems
			if want := len(tc.problem) > 0 || tc.wantErr != nil; want != (len(problems) == 1) {
				t.Fatalf("problems: %+v", problems)
			}
			for _, want := range tc.problem {
				if !strings.Contains(problems[0].Text, want) || problems[0].Collision {
					t.Errorf("problem %+v: want a non-collision problem mentioning %s", problems[0], want)
				}
			}
			for tool, want := range tc.calls {
				if got := callText(t, h, tool, nil); got != want {
					t.Errorf("%s: got %q, want %q", tool, got, want)
				}
			}
		})
	}
}

// FI-14: a tool an upstream adds after start under a name another
// upstream already exposes is left out with a problem; the existing tool
// keeps its name and its calls, whichever upstream sorts first.
func TestFI14DynamicCollisionKeepsTheIncumbent(t *testing.T) {
	for _, tc := range []struct{ incumbent, newcomer string }{
		{"alpha", "beta"}, // the newcomer also loses on name order
		{"zeta", "beta"},  // only the incumbency keeps zeta's tool
	} {
		t.Run(tc.incumbent+" then "+tc.newcomer, func(t *testing.T) {
			newcomer := builtinFake(tc.newcomer)
			newcomer.Prefix = ""
			h := newFaultHub(t, Options{Upstreams: []UpstreamConfig{toolsUpstream(tc.incumbent, "", "lookup"), newcomer}})
			if err := h.Start(t.Context()); err != nil {
				t.Fatal(err)
			}
			want := "lookup from " + tc.incumbent
			if got := callText(t, h, "lookup", nil); got != want {
				t.Fatalf("lookup before: got %q, want %q", got, want)
			}
			callText(t, h, "add_tool", map[string]any{"name": "lookup", "description": "Look anything up."})
			eventually(t, faultWait, "a problem for the newcomer's lookup", func() bool {
				return slices.ContainsFunc(h.Catalog().Problems, func(p Problem) bool {
					return p.Collision && strings.Contains(p.Text, `"lookup"`) &&
						slices.Equal(p.Upstreams, []string{tc.incumbent, tc.newcomer})
				})
			})
			tool, _ := h.Catalog().Tool("lookup")
			if tool.Upstream != tc.incumbent || tool.Def.Description != "Answers "+want {
				t.Errorf("lookup after: %s's %q, want %s's", tool.Upstream, tool.Def.Description, tc.incumbent)
			}
			if got := callText(t, h, "lookup", nil); got != want {
				t.Errorf("lookup after: got %q, want %q", got, want)
			}
			if got := callText(t, h, "echo", map[string]any{"text": "still here"}); got != "still here" {
				t.Errorf("the newcomer's other tools: got %q", got)
			}
		})
	}
}

// stdioPeer is a raw JSON-RPC client on a Server's ServeStdio.
type stdioPeer struct {
	in     *io.PipeWriter
	lines  chan []byte // closed when the server's output ends
	served chan error  // ServeStdio's result
}

func serveStdioPeer(t *testing.T, srv *Server) *stdioPeer {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	p := &stdioPeer{in: inW, lines: make(chan []byte, 256), served: make(chan error, 1)}
	ctx, cancel := context.WithCancel(context.WithoutCancel(t.Context()))
	go func() {
		err := srv.ServeStdio(ctx, inR, outW)
		outW.Close()
		p.served <- err
	}()
	read := make(chan struct{})
	go func() {
		defer close(read)
		defer close(p.lines)
		sc := bufio.NewScanner(outR)
		for sc.Scan() {
			select {
			case p.lines <- bytes.Clone(sc.Bytes()):
			default: // nobody reads any more: drop
			}
		}
	}()
	t.Cleanup(func() {
		inW.Close()
		cancel()
		<-read
	})
	return p
}

func (p *stdioPeer) send(t *testing.T, msg map[string]any) {
	t.Helper()
	msg["jsonrpc"] = "2.0"
	b, err := json.Marshal(msg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.in.Write(append(b, '\n')); err != nil {
		t.Fatalf("writing %s: %v", b, err)
	}
}

// next returns the next message the server writes.
func (p *stdioPeer) next(t *testing.T) map[string]any {
	t.Helper()
	select {
	case b, ok := <-p.lines:
		if !ok {
			t.Fatal("the server's output ended")
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("the server wrote %q: %v", b, err)
		}
		return m
	case <-time.After(faultWait):
		t.Fatalf("nothing from the server within %s", faultWait)
	}
	panic("unreachable")
}

// FI-18: a stdio client that goes away with calls in flight gets them
// cancelled upstream; ServeStdio returns, and closing the hub leaves
// no child and no goroutine behind.
func TestFI18StdioClientDisconnectCancelsInFlight(t *testing.T) {
	before := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, before) }) // runs last
	h := startHub(t, stdioFake("alpha"))
	pid, err := strconv.Atoi(callText(t, h, "alpha_pid", nil))
	if err != nil {
		t.Fatal(err)
	}
	srv := NewServer(ServerOptions{Hub: h})
	t.Cleanup(srv.Close)
	p := serveStdioPeer(t, srv)
	p.send(t, map[string]any{"id": 0, "method": "initialize", "params": map[string]any{"protocolVersion": "2025-11-25",
		"capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "fi18", "version": "1"}}})
	if m := p.next(t); m["result"] == nil {
		t.Fatalf("initialize: %v", m)
	}
	p.send(t, map[string]any{"method": "notifications/initialized"})
	const inFlight = 3
	for i := 1; i <= inFlight; i++ {
		p.send(t, map[string]any{"id": i, "method": "tools/call", "params": map[string]any{
			"name": "alpha_hang", "arguments": map[string]any{}, "_meta": map[string]any{"progressToken": "p" + strconv.Itoa(i)}}})
	}
	// hang reports progress once the upstream has the call.
	for waiting := inFlight; waiting > 0; {
		if m := p.next(t); m["method"] == "notifications/progress" {
			waiting--
		} else if m["id"] != nil {
			t.Fatalf("a call answered before the client left: %v", m)
		}
	}

	p.in.Close()
	select {
	case err := <-p.served:
		if err != nil {
			t.Errorf("ServeStdio after the client left: %v", err)
		}
	case <-time.After(faultWait):
		t.Fatalf("ServeStdio still running %s after the client left", faultWait)
	}
	eventually(t, faultWait, "alpha to see 3 cancellations", func() bool { return cancellations(t, h, "alpha_cancellations") == inFlight })
	srv.Close()
	h.Close()
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("child %d after Close: kill(0) = %v, want ESRCH", pid, err)
	}
}

// FI-18: a stdio client that stops reading the gateway's output without
// closing it does not hold the gateway's exit, whether the client closed
// the gateway's input or the gateway was told to stop. Two calls answer,
// once the connection ends, with replies larger than a pipe holds: one
// reply's Write blocks on the unread pipe, the other waits behind it.
// ServeStdio still returns, within the grace it gives the writes and a
// bound that only a hang meets, and leaves no goroutine behind: the
// pipe's write deadline fails the blocked Write. An output without a
// deadline (a pipe inherited in blocking mode) cannot be woken: ServeStdio
// returns without that Write, and the goroutines behind it end once it
// fails, here when the client's end closes.
func TestFI18StdioExitNotHeldByUnreadOutput(t *testing.T) {
	closeInput := func(in *os.File, _ context.CancelFunc) { in.Close() }
	for _, tc := range []struct {
		name       string
		end        func(in *os.File, cancel context.CancelFunc)
		noDeadline bool
	}{
		{"input ends", closeInput, false},
		{"context ends", func(_ *os.File, cancel context.CancelFunc) { cancel() }, false},
		{"input ends, output without deadline", closeInput, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newBIServer(t, startHub(t, builtinFake("alpha")))
			const calls = 2
			started := make(chan struct{}, calls)
			big := strings.Repeat("x", 256<<10) // a pipe holds 64 KiB on Linux
			srv.mcp.AddTool(mcp.NewTool("flood"), func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				started <- struct{}{}
				<-ctx.Done() // answers anyway, as a call finishing just then does
				return mcp.NewToolResultText(big), nil
			})
			inR, inW, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			outR, outW, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			before := goleak.IgnoreCurrent()
			ctx, cancel := context.WithCancel(context.WithoutCancel(t.Context()))
			served := make(chan struct{})
			var serveErr error
			var out io.Writer = outW
			if tc.noDeadline {
				out = struct{ io.Writer }{outW}
			}
			go func() {
				defer close(served)
				serveErr = srv.ServeStdio(ctx, inR, out)
			}()
			t.Cleanup(func() { // before the server's and the hub's; a hung ServeStdio's Write fails
				cancel()
				inW.Close()
				outR.Close()
				<-served
				inR.Close()
				outW.Close()
			})

			// The client reads the answer to initialize, and nothing after it.
			if _, err := io.WriteString(inW, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25",`+
				`"capabilities":{},"clientInfo":{"name":"fi18","version":"1"}}}`+"\n"); err != nil {
				t.Fatal(err)
			}
			if err := outR.SetReadDeadline(time.Now().Add(faultWait)); err != nil {
				t.Fatal(err)
			}
			if line, err := bufio.NewReader(outR).ReadString('\n'); err != nil || !strings.Contains(line, `"result"`) {
				t.Fatalf("initialize: got %q, %v", line, err)
			}
			lines := `{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"
			for i := 1; i <= calls; i++ {
				lines += toolsCall(t, i, "flood", map[string]any{}) + "\n"
			}
			if _, err := io.WriteString(inW, lines); err != nil {
				t.Fatal(err)
			}
			bound := time.NewTimer(stdioWriteGrace + faultWait)
			defer bound.Stop()
			for range calls {
				select {
				case <-started:
				case <-bound.C:
					t.Fatal("the calls did not start")
				}
			}

			tc.end(inW, cancel)
			select {
			case <-served:
			case <-bound.C:
				t.Fatalf("ServeStdio still running %s after the connection ended, its output unread", stdioWriteGrace+faultWait)
			}
			if serveErr != nil {
				t.Errorf("ServeStdio: %v", serveErr)
			}
			if tc.noDeadline {
				outR.Close()
			}
			goleak.VerifyNone(t, before)
		})
	}
}

// faultHTTP is a raw streamable HTTP client of one session.
type faultHTTP struct {
	url    string
	client *http.Client
	sid    string
}

func (c *faultHTTP) do(ctx context.Context, method, body string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.url, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if c.sid != "" {
		req.Header.Set(server.HeaderKeySessionID, c.sid)
		req.Header.Set(server.HeaderKeyProtocolVersion, "2025-11-25")
	}
	return c.client.Do(req)
}

// initialize opens a session asking for protocol version and returns the
// version the server chose.
func (c *faultHTTP) initialize(t *testing.T, version string) string {
	t.Helper()
	resp, err := c.do(t.Context(), http.MethodPost, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"`+
		version+`","capabilities":{},"clientInfo":{"name":"fi","version":"1"}}}`)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var m struct {
		Result struct {
			ProtocolVersion string `json:"protocolVersion"`
		} `json:"result"`
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &m) != nil {
		t.Fatalf("initialize: %d %s", resp.StatusCode, body)
	}
	c.sid = resp.Header.Get(server.HeaderKeySessionID)
	resp, err = c.do(t.Context(), http.MethodPost, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return m.Result.ProtocolVersion
}

// FI-19: a client of a 2025-11-25 session that drops the stream of a call
// in flight has not cancelled it: the upstream call goes on until the
// session ends (DELETE), and is cancelled then. The grace period running
// out, an explicit cancellation and Close are in grace_test.go.
func TestFI19HTTPClientDropsStream(t *testing.T) {
	h := startHub(t, stdioFake("alpha"))
	srv := NewServer(ServerOptions{Hub: h})
	t.Cleanup(srv.Close)
	ts := httptest.NewServer(srv.HTTPHandler())
	t.Cleanup(ts.Close)
	c := &faultHTTP{url: ts.URL + "/mcp", client: ts.Client()}
	if v := c.initialize(t, "2025-11-25"); v != "2025-11-25" {
		t.Fatalf("initialize: version %q", v)
	}
	dropCall(t, c, "1")

	t.Run("call goes on", func(t *testing.T) {
		deadline := time.Now().Add(500 * time.Millisecond)
		for time.Now().Before(deadline) {
			if n := cancellations(t, h, "alpha_cancellations"); n != 0 {
				t.Fatalf("the upstream call was cancelled (%d) when the client dropped its stream", n)
			}
		}
	})

	resp, err := c.do(t.Context(), http.MethodDelete, "")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	eventually(t, faultWait, "the upstream call cancelled once the session ended", func() bool {
		return cancellations(t, h, "alpha_cancellations") == 1
	})
}

// FI-20: a client of the 2026-07-28 (stateless) protocol that closes
// the response stream of a call has cancelled it: the upstream call is
// cancelled at once, with no grace period. A 2025-11-25 client on the same
// endpoint still gets a session.
func TestFI20StatelessClientClosesStream(t *testing.T) {
	h := startHub(t, stdioFake("alpha"))
	srv := NewServer(ServerOptions{Hub: h, DisconnectGrace: time.Hour})
	t.Cleanup(srv.Close)
	ts := httptest.NewServer(srv.HTTPHandler())
	t.Cleanup(ts.Close)
	legacy := &faultHTTP{url: ts.URL + "/mcp", client: ts.Client()}
	if v := legacy.initialize(t, "2025-11-25"); v != "2025-11-25" || legacy.sid == "" {
		t.Errorf("a 2025-11-25 client got version %q, session %q: want its version and a session", v, legacy.sid)
	}
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"alpha_hang","arguments":{},` +
		`"_meta":{"progressToken":"t1","` + mcp.MetaKeyProtocolVersion + `":"` + mcp.ProtocolVersion20260728 + `","` + mcp.MetaKeyClientCapabilities + `":{}}}}`
	ctx, drop := context.WithCancel(t.Context())
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, ts.URL+"/mcp", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set(mcp.HeaderProtocolVersion, mcp.ProtocolVersion20260728)
	req.Header.Set(mcp.HeaderMethod, "tools/call")
	req.Header.Set(mcp.HeaderName, "alpha_hang")
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() && !strings.Contains(sc.Text(), "notifications/progress") { // the upstream has the call
	}
	if sc.Err() != nil {
		t.Fatalf("the call's stream ended before the upstream had the call: %v", sc.Err())
	}
	drop()
	resp.Body.Close()
	eventually(t, faultWait, "the upstream call cancelled as the stream closed", func() bool {
		return cancellations(t, h, "alpha_cancellations") == 1
	})
}

// FI-21: cancelling a call just as it completes gives either its result
// or cancelled, once, and never breaks the connection; the upstream sees
// at most one cancellation per cancelled call.
func TestFI21CancelRacesCompletion(t *testing.T) {
	h := startHub(t, stdioFake("alpha"))
	pid := callText(t, h, "alpha_pid", nil)
	const sleepMS, rounds = 5, 100
	args := map[string]any{"ms": sleepMS}
	// A call's round trip here, to cancel around its end.
	var trips []time.Duration
	for range 5 {
		start := time.Now()
		callText(t, h, "alpha_sleep", args)
		trips = append(trips, time.Since(start))
	}
	slices.Sort(trips)
	trip := trips[len(trips)/2]
	var results, cancelled int
	for i := range rounds {
		ctx, cancel := context.WithCancel(t.Context())
		at := trip * time.Duration(60+80*i/rounds) / 100 // 0.6 to 1.4 round trips
		timer := time.AfterFunc(at, cancel)
		res, err := h.CallTool(ctx, "alpha_sleep", args, nil)
		timer.Stop()
		cancel()
		if err != nil {
			wantKind(t, fmt.Sprintf("round %d, cancelled after %s", i, at), err, call.KindCancelled)
			cancelled++
			continue
		}
		if text := mcp.GetTextFromContent(res.Content[0]); res.IsError || text != "slept 5ms" {
			t.Fatalf("round %d: got %v %q, want the result or cancelled", i, res.IsError, text)
		}
		results++
	}
	t.Logf("round trip %s: %d results, %d cancelled", trip, results, cancelled)
	callText(t, h, "alpha_sleep", map[string]any{"ms": 50}) // let the last cancellations land
	if got := callText(t, h, "alpha_pid", nil); got != pid {
		t.Errorf("alpha restarted during the races (pid %s, was %s)", got, pid)
	}
	if n := cancellations(t, h, "alpha_cancellations"); n > cancelled {
		t.Errorf("alpha saw %d cancellations for %d cancelled calls: a cancel reached a finished call", n, cancelled)
	}
}

// FI-23: stdio children die with the router: each runs in its own
// process group, which Close leaves empty. That they die when the router
// is killed (SIGKILL) is the watchdog's, tested on the built binary by
// cmd/mcp-router's TestLifecycleGrandchildrenDieWithTheGateway; that
// pinned tool hashes survive a restart is integrity's
// TestRestartKeepsPinsAndPendingChanges.
func TestFI23ChildrenDieWithTheRouter(t *testing.T) {
	t.Run("process group", func(t *testing.T) {
		h := startHub(t, stdioFake("alpha"))
		pid, err := strconv.Atoi(callText(t, h, "alpha_pid", nil))
		if err != nil {
			t.Fatal(err)
		}
		pgid, err := syscall.Getpgid(pid)
		if err != nil || pgid != pid || pgid == syscall.Getpgrp() {
			t.Fatalf("child %d: process group %d (%v), want its own", pid, pgid, err)
		}
		h.Close()
		if err := syscall.Kill(-pgid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("process group %d after Close: kill(0) = %v, want ESRCH (empty)", pgid, err)
		}
	})
}
