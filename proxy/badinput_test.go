package proxy

// The bad inputs of docs/reliability.md: one test per case, BI-01..BI-17, sending what
// a broken or hostile client sends: raw JSON-RPC lines into ServeStdio and
// raw HTTP requests into frontdoor.Guard(HTTPHandler()), as serve wires them.
//
// Not here: BI-07 (arguments against inputSchema) is in argcheck_test.go:
// by default the proxy passes arguments through unchanged (mcp-go's
// WithInputSchemaValidation is off) and the upstream judges them; with an
// upstream's validate_arguments on, the hub refuses a violating call
// before forwarding (invalid_arguments). run_plan's executor checks plan
// arguments in any case. BI-11 and BI-12 are in guard_test.go.
//
// A Server serves one stdio client at a time (its session id is fixed,
// stdioSessionID), so the stdio subtests that share a server run one after
// another (none is parallel), each ServeStdio with a session of its own.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcp-router/mcp-router/internal/syncbuf"
	"github.com/mcp-router/mcp-router/proxy/frontdoor"
)

// replyWait bounds every wait for a reply; the server answers in
// milliseconds.
const replyWait = 5 * time.Second

// rpcMsg is one JSON-RPC message from the server.
type rpcMsg struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	raw string
}

func parseMsg(t *testing.T, b []byte) rpcMsg {
	t.Helper()
	var m rpcMsg
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("server wrote %.200q, not a JSON-RPC message: %v", b, err)
	}
	m.raw = string(b)
	return m
}

// isReplyTo reports whether m is the response to the request with id (as
// JSON: `7`, `"x"`, `null`).
func (m rpcMsg) isReplyTo(id string) bool {
	got := string(m.ID)
	if got == "" {
		got = "null"
	}
	return m.Method == "" && got == id
}

// code is the error code, 0 for a result.
func (m rpcMsg) code() int {
	if m.Error == nil {
		return 0
	}
	return m.Error.Code
}

// wantError checks that m is an error response with code and the raw id
// member (`"id":null` must be present, not left out).
func (m rpcMsg) wantError(t *testing.T, code int, id string) {
	t.Helper()
	if m.code() != code || !strings.Contains(m.raw, `"id":`+id) {
		t.Errorf("got %.300s, want an error with code %d and id %s", m.raw, code, id)
	}
}

// toolResult is a tools/call result.
type toolResult struct {
	Content []struct {
		Type, Text string
	} `json:"content"`
	IsError           bool            `json:"isError"`
	StructuredContent json.RawMessage `json:"structuredContent"`
}

// tool decodes m as a tools/call result.
func (m rpcMsg) tool(t *testing.T) toolResult {
	t.Helper()
	var r toolResult
	if m.Error != nil || json.Unmarshal(m.Result, &r) != nil {
		t.Fatalf("got %.300s, want a tools/call result", m.raw)
	}
	return r
}

func (r toolResult) text() string {
	var parts []string
	for _, c := range r.Content {
		parts = append(parts, c.Text)
	}
	return strings.Join(parts, "\n")
}

// rawStdio writes JSON-RPC lines into a Server's ServeStdio and reads
// the lines it writes back.
type rawStdio struct {
	in    *io.PipeWriter
	lines chan []byte // closed when the server's output ends
	stash []rpcMsg    // read, not yet asked for
	seq   int         // numbers sync pings
}

func serveRawStdio(t *testing.T, srv *Server) *rawStdio {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := &rawStdio{in: inW, lines: make(chan []byte, 256)}
	ctx, cancel := context.WithCancel(context.WithoutCancel(t.Context()))
	served, read, stop := make(chan struct{}), make(chan struct{}), make(chan struct{})
	go func() {
		defer close(served)
		if err := srv.ServeStdio(ctx, inR, outW); err != nil {
			t.Errorf("ServeStdio: %v", err)
		}
		outW.Close()
	}()
	go func() {
		defer close(read)
		defer close(c.lines)
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 64<<20)
		for sc.Scan() {
			select {
			case c.lines <- bytes.Clone(sc.Bytes()):
			case <-stop: // the test is over: drain
			}
		}
	}()
	t.Cleanup(func() {
		close(stop)
		inW.Close() // EOF ends ServeStdio
		<-served
		cancel()
		<-read
	})
	return c
}

func (c *rawStdio) send(t *testing.T, line string) {
	t.Helper()
	if _, err := io.WriteString(c.in, line+"\n"); err != nil {
		t.Fatalf("writing %.80q: %v", line, err)
	}
}

// recv returns the next message the server writes.
func (c *rawStdio) recv(t *testing.T, deadline <-chan time.Time) rpcMsg {
	t.Helper()
	select {
	case b, ok := <-c.lines:
		if ok {
			return parseMsg(t, b)
		}
		t.Fatal("the server's output ended")
	case <-deadline:
		t.Fatalf("nothing from the server within %s (unclaimed: %v)", replyWait, c.stash)
	}
	return rpcMsg{}
}

// await returns the response to the request with id (as JSON), keeping
// other messages for later.
func (c *rawStdio) await(t *testing.T, id string) rpcMsg {
	t.Helper()
	if i := slices.IndexFunc(c.stash, func(m rpcMsg) bool { return m.isReplyTo(id) }); i >= 0 {
		m := c.stash[i]
		c.stash = slices.Delete(c.stash, i, i+1)
		return m
	}
	deadline := time.NewTimer(replyWait)
	defer deadline.Stop()
	for {
		m := c.recv(t, deadline.C)
		if m.isReplyTo(id) {
			return m
		}
		c.stash = append(c.stash, m)
	}
}

// sync pings and waits for the answer, which proves the session still
// works. It returns (and forgets) the unclaimed messages so far: for a
// line the server rejects while reading it, its reply is among them.
func (c *rawStdio) sync(t *testing.T) []rpcMsg {
	t.Helper()
	c.seq++
	id := fmt.Sprintf(`"sync-%d"`, c.seq)
	c.send(t, `{"jsonrpc":"2.0","id":`+id+`,"method":"ping"}`)
	if m := c.await(t, id); m.Error != nil {
		t.Fatalf("ping: %s", m.raw)
	}
	other := c.stash
	c.stash = nil
	return other
}

// initialize does the handshake with the given client capabilities.
func (c *rawStdio) initialize(t *testing.T, capabilities string) rpcMsg {
	t.Helper()
	c.send(t, `{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18",`+
		`"capabilities":`+capabilities+`,"clientInfo":{"name":"badinput-test","version":"1"}}}`)
	m := c.await(t, `"init"`)
	if m.Error != nil || !strings.Contains(string(m.Result), `"protocolVersion"`) {
		t.Fatalf("initialize: got %.300s", m.raw)
	}
	c.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return m
}

// callTool sends tools/call with id and waits for its response.
func (c *rawStdio) callTool(t *testing.T, id int, name string, args any) rpcMsg {
	t.Helper()
	c.send(t, toolsCall(t, id, name, args))
	return c.await(t, strconv.Itoa(id))
}

func toolsCall(t *testing.T, id int, name string, args any) string {
	t.Helper()
	b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call",
		"params": map[string]any{"name": name, "arguments": args}})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// newBIServer is the client-facing server on h, closed when the test ends.
func newBIServer(t *testing.T, h *Hub) *Server {
	t.Helper()
	srv := NewServer(ServerOptions{Hub: h})
	t.Cleanup(srv.Close)
	return srv
}

// serveRawHTTP serves srv as serve does: streamable HTTP behind Guard.
func serveRawHTTP(t *testing.T, srv *Server) *guarded {
	t.Helper()
	ts := httptest.NewServer(frontdoor.Guard(srv.HTTPHandler(), frontdoor.Options{}))
	t.Cleanup(ts.Close)
	return &guarded{URL: ts.URL + "/mcp", client: ts.Client()}
}

// do is post without a *testing.T, for other goroutines.
func (g *guarded) do(ctx context.Context, body string, hdr map[string]string) (guardReply, error) {
	r, err := g.raw().Do(ctx, body, hdr)
	return replyOf(r), err
}

// messages are the JSON-RPC messages of an HTTP reply: its JSON body, or
// the data of its event stream.
func (r guardReply) messages(t *testing.T) []rpcMsg {
	t.Helper()
	if len(bytes.TrimSpace(r.body)) == 0 {
		return nil
	}
	if !strings.HasPrefix(r.header.Get("Content-Type"), "text/event-stream") {
		return []rpcMsg{parseMsg(t, r.body)}
	}
	var out []rpcMsg
	for line := range strings.SplitSeq(string(r.body), "\n") {
		if data, ok := strings.CutPrefix(line, "data:"); ok {
			out = append(out, parseMsg(t, []byte(strings.TrimSpace(data))))
		}
	}
	return out
}

// reply is the one response in r.
func (r guardReply) reply(t *testing.T) rpcMsg {
	t.Helper()
	var out []rpcMsg
	for _, m := range r.messages(t) {
		if m.Method == "" {
			out = append(out, m)
		}
	}
	if len(out) != 1 {
		t.Fatalf("HTTP %d %.300s: got %d responses, want 1", r.status, r.body, len(out))
	}
	return out[0]
}

// recorder is an in-process upstream whose echo tool records the
// arguments that reach it, to show what was forwarded and what was not.
type recorder struct {
	// entered and release, when set, serve rec_hold: it says on entered
	// that a call arrived and answers "held" once it receives on release.
	entered, release chan struct{}

	mu    sync.Mutex
	calls []map[string]any // rec_echo's
}

// newHoldingRecorder is a recorder whose rec_hold calls the test releases.
func newHoldingRecorder() *recorder {
	return &recorder{entered: make(chan struct{}, 4), release: make(chan struct{})}
}

func (r *recorder) server() *server.MCPServer {
	s := server.NewMCPServer("rec", "1.0.0", server.WithToolCapabilities(true))
	s.AddTool(mcp.NewTool("echo", mcp.WithDescription("Record the call and return its text"),
		mcp.WithString("text")), r.echo)
	s.AddTool(mcp.NewTool("hold", mcp.WithDescription("Answer once the test releases the call")), r.hold)
	return s
}

func (r *recorder) hold(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	r.entered <- struct{}{}
	select {
	case <-r.release:
		return mcp.NewToolResultText("held"), nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// awaitHeld waits for a rec_hold call to arrive, for at most replyWait.
func (r *recorder) awaitHeld(t *testing.T) {
	t.Helper()
	select {
	case <-r.entered:
	case <-time.After(replyWait):
		t.Fatal("no rec_hold call reached the upstream")
	}
}

func (r *recorder) echo(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	args := req.GetArguments()
	r.mu.Lock()
	r.calls = append(r.calls, args)
	r.mu.Unlock()
	text, _ := args["text"].(string)
	return mcp.NewToolResultStructured(map[string]any{"text": text}, text), nil
}

func (r *recorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.calls)
}

// texts are the text arguments received, in order.
func (r *recorder) texts() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, c := range r.calls {
		s, _ := c["text"].(string)
		out = append(out, s)
	}
	return out
}

func (r *recorder) last() map[string]any {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.calls) == 0 {
		return nil
	}
	return r.calls[len(r.calls)-1]
}

// startRecHub starts a hub with the recorder as upstream rec (tool
// rec_echo) besides ups, which may be builtin fakes.
func startRecHub(t *testing.T, rec *recorder, ups ...UpstreamConfig) *Hub {
	t.Helper()
	ups = append(ups, UpstreamConfig{Name: "rec", Transport: TransportBuiltin, Builtin: "rec", Prefix: "rec_"})
	return startHubWith(t, Options{Upstreams: ups, Builtin: func(name string, args []string) (*server.MCPServer, error) {
		if name == "rec" {
			return rec.server(), nil
		}
		return fakeBuiltins(name, args)
	}})
}

// syncBuffer is a log destination safe for concurrent writes.
type syncBuffer = syncbuf.Buffer

func TestBI01InvalidJSON(t *testing.T) {
	rec := &recorder{}
	srv := newBIServer(t, startRecHub(t, rec))
	lines := []struct{ name, line string }{
		{"not JSON", `{not json`},
		{"truncated", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"rec_echo"`},
		{"trailing data", `{"jsonrpc":"2.0","id":1,"method":"ping"} x`},
		{"control bytes", "\x01\x02\x03"},
	}
	t.Run("stdio", func(t *testing.T) {
		c := serveRawStdio(t, srv)
		c.initialize(t, `{}`)
		for _, l := range lines {
			c.send(t, l.line)
			c.await(t, "null").wantError(t, mcp.PARSE_ERROR, "null")
		}
		if other := c.sync(t); len(other) != 0 {
			t.Errorf("unexpected messages: %v", other)
		}
	})
	t.Run("http", func(t *testing.T) {
		g := serveRawHTTP(t, srv)
		sid := g.initialize(t, nil)
		for _, l := range lines {
			r := g.post(t, l.line, inSession(sid))
			if r.status != http.StatusBadRequest {
				t.Errorf("%s: got HTTP %d, want 400", l.name, r.status)
			}
			r.reply(t).wantError(t, mcp.PARSE_ERROR, "null")
		}
		if r := g.post(t, toolsListBody, inSession(sid)); r.status != http.StatusOK {
			t.Errorf("tools/list after the bad bodies: got %d %s", r.status, r.body)
		}
	})
	if n := rec.count(); n != 0 {
		t.Errorf("the upstream got %d calls, want 0", n)
	}
}

func TestBI02BatchRejected(t *testing.T) {
	rec := &recorder{}
	srv := newBIServer(t, startRecHub(t, rec))
	batch := `[` + toolsCall(t, 1, "rec_echo", map[string]any{"text": "batched"}) + `,{"jsonrpc":"2.0","id":2,"method":"ping"}]`
	t.Run("stdio", func(t *testing.T) {
		c := serveRawStdio(t, srv)
		c.initialize(t, `{}`)
		c.send(t, batch)
		m := c.await(t, "null")
		if m.Error == nil {
			t.Fatalf("batch: got %s, want an error", m.raw)
		}
		for _, o := range c.sync(t) {
			if o.isReplyTo("1") || o.isReplyTo("2") {
				t.Errorf("a request of the batch was answered: %s", o.raw)
			}
		}
		m.wantError(t, mcp.INVALID_REQUEST, "null") // valid JSON: not a parse error
	})
	t.Run("http", func(t *testing.T) {
		g := serveRawHTTP(t, srv)
		sid := g.initialize(t, nil)
		r := g.post(t, batch, inSession(sid))
		if r.status != http.StatusBadRequest {
			t.Errorf("batch: got HTTP %d %s, want 400", r.status, r.body)
		}
		m := r.reply(t)
		if m.Error == nil {
			t.Errorf("batch: got %s, want an error", m.raw)
		}
		m.wantError(t, mcp.INVALID_REQUEST, "null") // valid JSON: not a parse error
	})
	if n := rec.count(); n != 0 {
		t.Errorf("the batch reached the upstream: %d calls, want 0", n)
	}
}

func TestBI03InvalidRequests(t *testing.T) {
	args := `"params":{"name":"rec_echo","arguments":{"text":"must not arrive"}}`
	cases := []struct {
		name, line string
		id         string // of the request, as JSON
	}{
		// mcp-go alone would take "id": null for a notification and
		// never answer.
		{name: "id null", id: "null", line: `{"jsonrpc":"2.0","id":null,"method":"tools/call",` + args + `}`},
		{name: "no jsonrpc", id: "2", line: `{"id":2,"method":"tools/call",` + args + `}`},
		{name: "jsonrpc 1.0", id: "3", line: `{"jsonrpc":"1.0","id":3,"method":"tools/call",` + args + `}`},
		// mcp-go alone would answer -32700 with id null: the client could
		// not match the error to its request.
		{name: "method not a string", id: "4", line: `{"jsonrpc":"2.0","id":4,"method":5,` + args + `}`},
		{name: "params an array", id: "5", line: `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":["rec_echo"]}`},
	}
	rec := &recorder{}
	srv := newBIServer(t, startRecHub(t, rec))
	t.Run("stdio", func(t *testing.T) {
		c := serveRawStdio(t, srv)
		c.initialize(t, `{}`)
		for _, tc := range cases {
			c.send(t, tc.line)
			check := func(t *testing.T) {
				if m := c.await(t, tc.id); m.code() != mcp.INVALID_REQUEST && m.code() != mcp.INVALID_PARAMS {
					t.Errorf("got %.300s, want -32600 or -32602 with id %s", m.raw, tc.id)
				}
			}
			t.Run(tc.name, check)
			c.sync(t) // the session survives
		}
	})
	t.Run("http", func(t *testing.T) {
		g := serveRawHTTP(t, srv)
		sid := g.initialize(t, nil)
		for _, tc := range cases {
			r := g.post(t, tc.line, inSession(sid))
			check := func(t *testing.T) {
				if r.status != http.StatusOK && r.status != http.StatusBadRequest {
					t.Fatalf("got HTTP %d %s, want 200 or 400 with an error", r.status, r.body)
				}
				if m := r.reply(t); m.code() != mcp.INVALID_REQUEST && m.code() != mcp.INVALID_PARAMS {
					t.Errorf("got %.300s, want -32600 or -32602 with id %s", m.raw, tc.id)
				}
			}
			t.Run(tc.name, check)
		}
		if r := g.post(t, `{"jsonrpc":"2.0","id":9,"method":"ping"}`, inSession(sid)); r.status != http.StatusOK {
			t.Errorf("ping after the bad requests: got %d %s", r.status, r.body)
		}
	})
	if n := rec.count(); n != 0 {
		t.Errorf("invalid requests reached the upstream: %d calls, want 0", n)
	}
}

// A tools/call whose id a call in progress uses is refused, spelled
// plainly or with an escape (the method spelled with a JSON escape is the
// same method); the call in progress is unaffected. The first call is held
// at the upstream until the second is answered, so no timing decides it.
func TestBI04ReusedInFlightID(t *testing.T) {
	rec := newHoldingRecorder()
	c := serveRawStdio(t, newBIServer(t, startRecHub(t, rec)))
	c.initialize(t, `{}`)
	for i, tc := range []struct{ name, method string }{{"second rejected", "tools/call"}, {"escaped method rejected", `tools\/call`}} {
		id := strconv.Itoa(7 + i)
		c.send(t, toolsCall(t, 7+i, "rec_hold", nil))
		rec.awaitHeld(t)
		c.send(t, strings.Replace(toolsCall(t, 7+i, "rec_echo", map[string]any{"text": "second"}), "tools/call", tc.method, 1))
		second := c.await(t, id)
		rec.release <- struct{}{}
		first := c.await(t, id)
		if r := first.tool(t); r.IsError || r.text() != "held" {
			t.Errorf("%s: first call: got %s, want it unaffected (held)", tc.name, first.raw)
		}
		t.Run(tc.name, func(t *testing.T) {
			second.wantError(t, mcp.INVALID_REQUEST, id)
			if n := rec.count(); n != 0 {
				t.Errorf("the second request was forwarded (%d calls)", n)
			}
		})
	}
}

// Over HTTP too, a tools/call whose id a call in progress in the same
// session uses is refused, spelled plainly or with an escape (the hook
// then reads the method as the pre-check read it).
func TestBI04ReusedInFlightIDOverHTTP(t *testing.T) {
	rec := newHoldingRecorder()
	g := serveRawHTTP(t, newBIServer(t, startRecHub(t, rec)))
	sid := g.initialize(t, nil)
	for _, tc := range []struct{ name, method string }{{"plain", "tools/call"}, {"escaped", `tools\/call`}} {
		t.Run(tc.name, func(t *testing.T) {
			first := make(chan guardReply, 1)
			go func() {
				r, err := g.do(t.Context(), toolsCall(t, 7, "rec_hold", nil), inSession(sid))
				if err != nil {
					t.Error(err)
				}
				first <- r
			}()
			rec.awaitHeld(t) // the first call is in progress
			second := strings.Replace(toolsCall(t, 7, "rec_echo", map[string]any{"text": "second"}), "tools/call", tc.method, 1)
			g.post(t, second, inSession(sid)).reply(t).wantError(t, mcp.INVALID_REQUEST, "7")
			rec.release <- struct{}{}
			if r := (<-first).reply(t).tool(t); r.IsError || r.text() != "held" {
				t.Errorf("first call: got %+v, want it unaffected (held)", r)
			}
			if n := rec.count(); n != 0 {
				t.Errorf("the second request was forwarded (%d calls)", n)
			}
		})
	}
}

// progressEvent is the params of a notifications/progress.
type progressEvent struct {
	ProgressToken any     `json:"progressToken"`
	Progress      float64 `json:"progress"`
	Total         float64 `json:"total"`
}

// progressCall is a tools/call of alpha_progress with id 1 and token "p".
func progressCall(steps int) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"alpha_progress",`+
		`"arguments":{"steps":%d},"_meta":{"progressToken":"p"}}}`, steps)
}

// progressOf splits an HTTP reply into its progress notifications and
// its response.
func progressOf(t *testing.T, r guardReply) ([]progressEvent, rpcMsg) {
	t.Helper()
	var events []progressEvent
	for _, m := range r.messages(t) {
		if m.Method == string(mcp.MethodNotificationProgress) {
			var p progressEvent
			if err := json.Unmarshal(m.Params, &p); err != nil {
				t.Fatalf("progress %s: %v", m.raw, err)
			}
			events = append(events, p)
		}
	}
	return events, r.reply(t)
}

func TestBI05SameIDAndTokenInTwoSessions(t *testing.T) {
	g := serveRawHTTP(t, newBIServer(t, startHub(t, stdioFake("alpha"))))
	steps := []int{2, 4}
	sids := []string{g.initialize(t, nil), g.initialize(t, nil)}
	replies := make([]guardReply, len(steps))
	errs := make([]error, len(steps))
	var wg sync.WaitGroup
	for i := range steps {
		wg.Go(func() { replies[i], errs[i] = g.do(t.Context(), progressCall(steps[i]), inSession(sids[i])) })
	}
	wg.Wait()
	for i, n := range steps {
		if errs[i] != nil {
			t.Fatalf("session %d: %v", i, errs[i])
		}
		events, res := progressOf(t, replies[i])
		if want := fmt.Sprintf("done %d steps", n); !res.isReplyTo("1") || res.tool(t).text() != want {
			t.Errorf("session %d: got %s, want id 1 and %q", i, res.raw, want)
		}
		if len(events) == 0 {
			t.Errorf("session %d: no progress", i)
		}
		for _, e := range events {
			if e.ProgressToken != "p" || e.Total != float64(n) {
				t.Errorf("session %d (%d steps) got progress %+v, want token p and total %d only", i, n, e, n)
			}
		}
	}
	t.Run("in-process upstream", func(t *testing.T) {
		g := serveRawHTTP(t, newBIServer(t, startHub(t, builtinFake("alpha"))))
		r := g.post(t, progressCall(3), inSession(g.initialize(t, nil)))
		events, _ := progressOf(t, r)
		if len(events) == 0 {
			t.Fatal("no progress")
		}
		for _, e := range events {
			if e.Progress < 1 || e.Total != 3 {
				t.Errorf("got progress %+v, want 1..3 of 3", e)
			}
		}
	})
}

func TestBI06UnknownMethodAndTool(t *testing.T) {
	rec := &recorder{}
	srv := newBIServer(t, startRecHub(t, rec))
	unknownMethod := `{"jsonrpc":"2.0","id":1,"method":"tools/nope"}`
	direct := toolsCall(t, 2, "rec_nope", map[string]any{})
	viaCallTool := toolsCall(t, 3, "call_tool", map[string]any{"name": "rec_nope", "arguments": map[string]any{}})
	check := func(t *testing.T, method, tool, callTool rpcMsg) {
		t.Helper()
		method.wantError(t, mcp.METHOD_NOT_FOUND, "1")
		// A direct call of a name the client's list lacks is mcp-go's
		// protocol error, as the tools spec has it.
		tool.wantError(t, mcp.INVALID_PARAMS, "2")
		if !strings.Contains(tool.raw, "rec_nope") {
			t.Errorf("unknown tool error %s does not name the tool", tool.raw)
		}
		// call_tool is a tool that ran: its failure is an isError result
		// the model can read, naming the tool, with the kind for programs.
		r := callTool.tool(t)
		if !r.IsError || !strings.Contains(r.text(), "rec_nope") || !strings.Contains(string(r.StructuredContent), `"kind":"unknown_tool"`) {
			t.Errorf("call_tool of an unknown tool: got %s, want an isError result naming it, kind unknown_tool", callTool.raw)
		}
	}
	t.Run("stdio", func(t *testing.T) {
		c := serveRawStdio(t, srv)
		c.initialize(t, `{}`)
		for _, l := range []string{unknownMethod, direct, viaCallTool} {
			c.send(t, l)
		}
		check(t, c.await(t, "1"), c.await(t, "2"), c.await(t, "3"))
		c.sync(t)
	})
	t.Run("http", func(t *testing.T) {
		g := serveRawHTTP(t, srv)
		h := inSession(g.initialize(t, nil))
		var got []rpcMsg
		for _, l := range []string{unknownMethod, direct, viaCallTool} {
			r := g.post(t, l, h)
			if r.status != http.StatusOK {
				t.Errorf("got HTTP %d %s, want 200 with the JSON-RPC answer", r.status, r.body)
			}
			got = append(got, r.reply(t))
		}
		check(t, got[0], got[1], got[2])
	})
	if n := rec.count(); n != 0 {
		t.Errorf("the upstream got %d calls, want 0", n)
	}
}

// nested is JSON array nesting depth levels deep.
func nested(depth int) string { return strings.Repeat("[", depth) + strings.Repeat("]", depth) }

func TestBI08OversizedInput(t *testing.T) {
	rec := &recorder{}
	srv := newBIServer(t, startRecHub(t, rec))
	deep := toolsCall(t, 1, "rec_echo", map[string]any{"text": "deep", "deep": json.RawMessage(nested(10000))})
	t.Run("stdio nested 10000", func(t *testing.T) {
		c := serveRawStdio(t, srv)
		c.initialize(t, `{}`)
		c.send(t, deep)
		// encoding/json stops at depth 10000, without recursion trouble.
		c.await(t, "null").wantError(t, mcp.PARSE_ERROR, "null")
		c.sync(t)
	})
	g := serveRawHTTP(t, srv)
	h := inSession(g.initialize(t, nil))
	t.Run("http nested 10000", func(t *testing.T) {
		r := g.post(t, deep, h)
		if r.status != http.StatusBadRequest {
			t.Errorf("got HTTP %d, want 400", r.status)
		}
		r.reply(t).wantError(t, mcp.PARSE_ERROR, "null")
	})
	if n := rec.count(); n != 0 {
		t.Fatalf("deep JSON reached the upstream: %d calls", n)
	}
	t.Run("http 1M-element array", func(t *testing.T) {
		const n = 1_000_000
		body := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"rec_echo","arguments":` +
			`{"text":"big array","items":[` + strings.Repeat("0,", n-1) + `0]}}}`
		r := g.post(t, body, h)
		if got := r.reply(t).tool(t); r.status != http.StatusOK || got.IsError || got.text() != "big array" {
			t.Fatalf("got HTTP %d %.300s, want the call served", r.status, r.body)
		}
		if items, _ := rec.last()["items"].([]any); len(items) != n {
			t.Errorf("the upstream got %d items, want %d", len(items), n)
		}
	})
	t.Run("http 3 MiB string", func(t *testing.T) {
		big := strings.Repeat("x", 3<<20)
		r := g.post(t, toolsCall(t, 3, "rec_echo", map[string]any{"text": "big string", "blob": big}), h)
		if got := r.reply(t).tool(t); r.status != http.StatusOK || got.IsError || got.text() != "big string" {
			t.Fatalf("got HTTP %d %.300s, want the call served", r.status, r.body)
		}
		if got, _ := rec.last()["blob"].(string); got != big {
			t.Errorf("the upstream got %d bytes, want %d", len(got), len(big))
		}
	})
	t.Run("http 5 MiB string", func(t *testing.T) {
		before := rec.count()
		r := g.post(t, toolsCall(t, 4, "rec_echo", map[string]any{"text": strings.Repeat("x", 5<<20)}), h)
		wantRefusal(t, r, http.StatusRequestEntityTooLarge, "request body larger than")
		if rec.count() != before {
			t.Error("the oversized call reached the upstream")
		}
	})
	if r := g.post(t, toolsListBody, h); r.status != http.StatusOK {
		t.Errorf("tools/list after the large bodies: got %d", r.status)
	}
	// BI-08 wants a refusal past depth 30 to 64, as ContextForge's
	// max_json_depth; encoding/json alone stops at 10000.
	t.Run("depth limit", func(t *testing.T) {
		before := rec.count()
		r := g.post(t, toolsCall(t, 5, "rec_echo", map[string]any{"text": "65", "deep": json.RawMessage(nested(65))}), h)
		if m := r.reply(t); m.Error == nil && !m.tool(t).IsError {
			t.Errorf("arguments 65 deep: got %.200s, want a refusal", m.raw)
		}
		if rec.count() != before {
			t.Error("arguments 65 deep reached the upstream")
		}
	})
}

func TestBI09BadStrings(t *testing.T) {
	rec := &recorder{}
	srv := newBIServer(t, startRecHub(t, rec))
	// A raw 0xff byte, an escaped NUL and an escaped lone surrogate: Go's
	// JSON decoder turns the invalid byte and the surrogate into U+FFFD
	// and keeps the NUL, the same way on both transports.
	call := "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"rec_echo\"," +
		"\"arguments\":{\"text\":\"a\xffb\\u0000c\\ud800d\"}}}"
	const want = "a\uFFFDb\x00c\uFFFDd"
	badName := toolsCall(t, 2, "rec_e\xffcho\x00", map[string]any{})
	rawNUL := "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"rec_echo\",\"arguments\":{\"text\":\"a\x00b\"}}}"
	check := func(t *testing.T, res, name rpcMsg) {
		t.Helper()
		if got := res.tool(t).text(); got != want {
			t.Errorf("echo: got %q, want %q", got, want)
		}
		if got := rec.last()["text"]; got != want {
			t.Errorf("the upstream got %q, want %q", got, want)
		}
		name.wantError(t, mcp.INVALID_PARAMS, "2")
	}
	t.Run("stdio", func(t *testing.T) {
		c := serveRawStdio(t, srv)
		c.initialize(t, `{}`)
		c.send(t, call)
		res := c.await(t, "1")
		c.send(t, badName)
		check(t, res, c.await(t, "2"))
		c.send(t, rawNUL) // a control character inside a string is not JSON
		c.await(t, "null").wantError(t, mcp.PARSE_ERROR, "null")
		c.sync(t)
	})
	t.Run("http", func(t *testing.T) {
		g := serveRawHTTP(t, srv)
		h := inSession(g.initialize(t, nil))
		res := g.post(t, call, h).reply(t)
		check(t, res, g.post(t, badName, h).reply(t))
		r := g.post(t, rawNUL, h)
		if r.status != http.StatusBadRequest {
			t.Errorf("raw NUL: got HTTP %d, want 400", r.status)
		}
		r.reply(t).wantError(t, mcp.PARSE_ERROR, "null")
	})
	if got := rec.texts(); !slices.Equal(got, []string{want, want}) {
		t.Errorf("the upstream got %q, want the sanitised text once per transport", got)
	}
}

func TestBI10Lifecycle(t *testing.T) {
	rec := &recorder{}
	srv := newBIServer(t, startRecHub(t, rec))
	call := toolsCall(t, 1, "rec_echo", map[string]any{"text": "before initialize"})
	t.Run("http request before initialize", func(t *testing.T) {
		// Without initialize there is no session id: mcp-go answers 404.
		g := serveRawHTTP(t, srv)
		if r := g.post(t, call, nil); r.status != http.StatusNotFound {
			t.Errorf("got HTTP %d %s, want 404", r.status, r.body)
		}
		if n := rec.count(); n != 0 {
			t.Errorf("a call before initialize reached the upstream (%d calls)", n)
		}
	})
	t.Run("http initialize twice", func(t *testing.T) {
		// An initialize within a session is refused (mcp-go alone would
		// open a new session); the first one is not reset or taken over.
		g := serveRawHTTP(t, srv)
		sid := g.initialize(t, nil)
		r := g.post(t, initializeBody, inSession(sid))
		if again := r.header.Get(server.HeaderKeySessionID); r.status != http.StatusBadRequest || again != "" {
			t.Errorf("second initialize: got HTTP %d with session id %q, want 400 and none", r.status, again)
		}
		r.reply(t).wantError(t, mcp.INVALID_REQUEST, "1")
		if r := g.post(t, toolsListBody, inSession(sid)); r.status != http.StatusOK {
			t.Errorf("first session after the second initialize: got %d %s", r.status, r.body)
		}
	})
	t.Run("stdio initialize cancelled", func(t *testing.T) {
		// "initialize MUST NOT be cancelled": the cancellation is ignored.
		c := serveRawStdio(t, srv)
		c.send(t, `{"jsonrpc":"2.0","id":"init-c","method":"initialize","params":{"protocolVersion":"2025-06-18",`+
			`"capabilities":{},"clientInfo":{"name":"badinput-test","version":"1"}}}`)
		c.send(t, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"init-c"}}`)
		if m := c.await(t, `"init-c"`); m.Error != nil || !strings.Contains(string(m.Result), `"protocolVersion"`) {
			t.Errorf("initialize: got %.300s, want its result", m.raw)
		}
		c.sync(t)
	})
	// mcp-go serves a tools/call before initialize as after it: the
	// pre-check keeps the handshake (wire.StdioFilter).
	t.Run("stdio request before initialize", func(t *testing.T) {
		c := serveRawStdio(t, srv)
		c.send(t, call)
		if m := c.await(t, "1"); m.Error == nil {
			t.Errorf("got %.300s, want an error", m.raw)
		}
		if n := rec.count(); n != 0 {
			t.Errorf("a call before initialize reached the upstream (%d calls)", n)
		}
	})
	// mcp-go alone answers a second initialize like the first and
	// replaces the session's client info and capabilities.
	t.Run("stdio initialize twice", func(t *testing.T) {
		c := serveRawStdio(t, srv)
		c.initialize(t, `{}`)
		c.send(t, `{"jsonrpc":"2.0","id":"again","method":"initialize","params":{"protocolVersion":"2025-06-18",`+
			`"capabilities":{},"clientInfo":{"name":"someone-else","version":"1"}}}`)
		if m := c.await(t, `"again"`); m.Error == nil {
			t.Errorf("second initialize: got %.300s, want an error", m.raw)
		}
	})
}

func TestBI13CancelUnknownRequest(t *testing.T) {
	rec := &recorder{}
	srv := newBIServer(t, startRecHub(t, rec))
	unknown := []string{
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":999}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"never-sent","reason":"x"}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`, // answered already
	}
	malformed := []string{
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":"garbage"}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":{"not":"an id"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled"}`,
	}
	// mcp-go alone answers "params":"garbage" with -32700 (over HTTP 200
	// with that body, not 202), though a notification is never answered.
	t.Run("stdio", func(t *testing.T) {
		c := serveRawStdio(t, srv)
		c.initialize(t, `{}`)
		c.callTool(t, 1, "rec_echo", map[string]any{"text": "one"})
		for _, l := range unknown {
			c.send(t, l)
		}
		if other := c.sync(t); len(other) != 0 {
			t.Errorf("cancellations of unknown requests were answered: %v", other)
		}
		for _, l := range malformed {
			c.send(t, l)
		}
		other := c.sync(t)
		if m := c.callTool(t, 2, "rec_echo", map[string]any{"text": "two"}); m.tool(t).text() != "two" {
			t.Errorf("a call after the cancellations: got %s", m.raw)
		}
		t.Run("malformed", func(t *testing.T) {
			if len(other) != 0 {
				t.Errorf("malformed cancellations were answered: %v", other)
			}
		})
	})
	t.Run("http", func(t *testing.T) {
		g := serveRawHTTP(t, srv)
		h := inSession(g.initialize(t, nil))
		for _, l := range unknown {
			if r := g.post(t, l, h); r.status != http.StatusAccepted || len(r.body) != 0 {
				t.Errorf("%s: got HTTP %d %q, want 202 and no body", l, r.status, r.body)
			}
		}
		var replies []guardReply
		for _, l := range malformed {
			replies = append(replies, g.post(t, l, h))
		}
		if r := g.post(t, toolsCall(t, 3, "rec_echo", map[string]any{"text": "three"}), h); r.reply(t).tool(t).text() != "three" {
			t.Errorf("a call after the cancellations: got %d %s", r.status, r.body)
		}
		t.Run("malformed", func(t *testing.T) {
			for i, r := range replies {
				if r.status != http.StatusAccepted || len(r.body) != 0 {
					t.Errorf("%s: got HTTP %d %q, want 202 and no body", malformed[i], r.status, r.body)
				}
			}
		})
	})
}

func TestBI14SamplingWithoutCapability(t *testing.T) {
	up := stdioFake("alpha") // a builtin upstream has no sampling relay
	up.Timeout = 4 * replyWait
	c := serveRawStdio(t, newBIServer(t, startHub(t, up)))
	c.initialize(t, `{}`) // no sampling capability
	c.send(t, toolsCall(t, 10, "alpha_sample", map[string]any{"prompt": "hi"}))
	var forwarded []string
	deadline := time.NewTimer(replyWait)
	defer deadline.Stop()
	var res rpcMsg
	for {
		m := c.recv(t, deadline.C)
		if m.Method == string(mcp.MethodSamplingCreateMessage) {
			// What a client without the capability answers, if anything.
			forwarded = append(forwarded, m.raw)
			c.send(t, `{"jsonrpc":"2.0","id":`+string(m.ID)+`,"error":{"code":-32601,"message":"Method not found"}}`)
			continue
		}
		if m.isReplyTo("10") {
			res = m
			break
		}
	}
	// The upstream is told no, and its tool reports that.
	if r := res.tool(t); !r.IsError || !strings.HasPrefix(r.text(), "sampling: ") {
		t.Errorf("got %s, want the upstream's isError result \"sampling: <error>\"", res.raw)
	}
	t.Run("not forwarded", func(t *testing.T) {
		if len(forwarded) != 0 {
			t.Errorf("sent to the client: %q", forwarded)
		}
	})
}

// runPlan calls run_plan over c and decodes the result.
func runPlan(t *testing.T, c *rawStdio, id int, plan map[string]any) (toolResult, rpcMsg) {
	t.Helper()
	m := c.callTool(t, id, "run_plan", plan)
	return m.tool(t), m
}

// planStep is a run_plan step with a text argument.
func planStep(id, tool, text string) map[string]any {
	return map[string]any{"id": id, "tool": tool, "args": map[string]any{"text": text}}
}

func TestBI15InvalidPlanRejected(t *testing.T) {
	rec := &recorder{}
	c := serveRawStdio(t, newBIServer(t, startRecHub(t, rec)))
	c.initialize(t, `{}`)
	many := make([]any, 65)
	for i := range many {
		many[i] = planStep(fmt.Sprintf("s%d", i), "rec_echo", "x")
	}
	cases := []struct {
		name  string
		steps []any
		want  []string // in the error text
		step  string   // named in structuredContent, when one is to blame
	}{
		{"cycle", []any{planStep("a", "rec_echo", "$<<b.text>>"), planStep("b", "rec_echo", "$<<a.text>>")},
			[]string{`step "a"`, "cycle"}, "a"},
		{"unknown step", []any{planStep("ok", "rec_echo", "fine"), planStep("b", "rec_echo", "$<<zz.text>>")},
			[]string{`step "b"`, `unknown step "zz"`}, "b"},
		{"unknown tool", []any{planStep("ok", "rec_echo", "fine"), planStep("c", "rec_nope", "x")},
			[]string{`step "c"`, `"rec_nope"`}, "c"},
		{"too many steps", many, []string{"65 steps", "limit of 64"}, ""},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, m := runPlan(t, c, i+1, map[string]any{"steps": tc.steps})
			if !r.IsError {
				t.Fatalf("got %.300s, want an isError result", m.raw)
			}
			for _, w := range tc.want {
				if !strings.Contains(r.text(), w) {
					t.Errorf("error %q does not say %s", r.text(), w)
				}
			}
			var sc struct {
				Error struct {
					Kind     string `json:"kind"`
					Problems []struct {
						Step string `json:"step"`
					} `json:"problems"`
				} `json:"error"`
			}
			if err := json.Unmarshal(r.StructuredContent, &sc); err != nil || sc.Error.Kind != "invalid_plan" {
				t.Errorf("structuredContent %s: want error.kind invalid_plan", r.StructuredContent)
			}
			var steps []string
			for _, p := range sc.Error.Problems {
				steps = append(steps, p.Step)
			}
			if tc.step != "" && !slices.Contains(steps, tc.step) {
				t.Errorf("problems %s do not name step %q", r.StructuredContent, tc.step)
			}
		})
	}
	if n := rec.count(); n != 0 {
		t.Errorf("invalid plans made %d upstream calls, want 0", n)
	}
}

func TestBI16PlanLiteralsStayLiteral(t *testing.T) {
	rec := &recorder{}
	c := serveRawStdio(t, newBIServer(t, startRecHub(t, rec)))
	c.initialize(t, `{}`)
	var out struct {
		Strategy string `json:"strategy"`
	}
	t.Run("no false dependency", func(t *testing.T) {
		r, m := runPlan(t, c, 1, map[string]any{"steps": []any{
			planStep("lit", "rec_echo", "costs $5, see #E1, keep $$<<x>>"),
			planStep("esc", "rec_echo", "$$<<lit.text>>"),
		}})
		if r.IsError || json.Unmarshal(r.StructuredContent, &out) != nil || out.Strategy != "PARALLEL_TOOLS" {
			t.Fatalf("got %.300s, want both steps run in parallel (PARALLEL_TOOLS)", m.raw)
		}
		got := rec.texts()
		slices.Sort(got)
		if want := []string{"$<<lit.text>>", "costs $5, see #E1, keep $<<x>>"}; !slices.Equal(got, want) {
			t.Errorf("the upstream got %q, want %q", got, want)
		}
	})
	t.Run("results never expanded", func(t *testing.T) {
		before := len(rec.texts())
		// t returns a text holding reference syntax; u uses it whole.
		r, m := runPlan(t, c, 2, map[string]any{"steps": []any{
			planStep("t", "rec_echo", "$$<<a./x>> and $$<<t.text>>"),
			planStep("u", "rec_echo", "got: $<<t.text>>"),
		}})
		if r.IsError {
			t.Fatalf("got %.300s", m.raw)
		}
		got := rec.texts()[before:]
		if want := []string{"$<<a./x>> and $<<t.text>>", "got: $<<a./x>> and $<<t.text>>"}; !slices.Equal(got, want) {
			t.Errorf("the upstream got %q, want %q", got, want)
		}
	})
}

func TestBI17OddUpstreamToolNames(t *testing.T) {
	long, longest := strings.Repeat("n", 65), strings.Repeat("m", 64)
	odd := []string{"Search", "search", "has space", "ünïcode", long, longest, "dotted.name-1"}
	build := func(string, []string) (*server.MCPServer, error) {
		s := server.NewMCPServer("odd", "1.0.0", server.WithToolCapabilities(true))
		for _, name := range odd {
			s.AddTool(mcp.NewTool(name, mcp.WithDescription("A tool named "+name)),
				func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
					return mcp.NewToolResultText(name), nil
				})
		}
		return s, nil
	}
	var logs syncBuffer
	h := startHubWith(t, Options{
		Upstreams: []UpstreamConfig{{Name: "odd", Transport: TransportBuiltin, Builtin: "odd"}}, // no prefix
		Builtin:   build, Logger: slog.New(slog.NewTextHandler(&logs, nil)),
	})
	cat := h.Catalog()
	for _, name := range []string{"Search", "search", longest, "dotted.name-1"} {
		if _, ok := cat.Tool(name); !ok {
			t.Errorf("catalog lacks %q", name)
		}
	}
	for _, name := range []string{"has space", "ünïcode", long} {
		if _, ok := cat.Tool(name); ok {
			t.Errorf("catalog has %q, want it left out", name)
		}
		quoted := strconv.Quote(name)
		if !slices.ContainsFunc(cat.Problems, func(p Problem) bool { return strings.Contains(p.Text, quoted) && !p.Collision }) {
			t.Errorf("no catalog problem names %s: %+v", quoted, cat.Problems)
		}
		if !strings.Contains(logs.String(), name) {
			t.Errorf("log does not name %s:\n%s", quoted, logs.String())
		}
	}
	if n := strings.Count(logs.String(), "catalog problem"); n != 3 {
		t.Errorf("logged %d catalog problems, want 3:\n%s", n, logs.String())
	}

	// The client sees both case variants, and each calls its own tool.
	c := serveRawStdio(t, newBIServer(t, h))
	c.initialize(t, `{}`)
	for i, name := range []string{"Search", "search"} {
		if got := c.callTool(t, i+1, name, map[string]any{}).tool(t).text(); got != name {
			t.Errorf("calling %s: got %q", name, got)
		}
	}
	// Both case variants are kept, but flagged as possible shadowing: a
	// catalog warning naming both tools and the upstream, logged once.
	t.Run("case variants flagged", func(t *testing.T) {
		i := slices.IndexFunc(cat.Warnings, func(p Problem) bool { return slices.Equal(p.Tools, []string{"Search", "search"}) })
		if i < 0 {
			t.Fatalf("no catalog warning about Search and search: %+v", cat.Warnings)
		}
		w := cat.Warnings[i]
		if !slices.Equal(w.Upstreams, []string{"odd"}) || !strings.Contains(w.Text, "upstream odd") || w.Collision {
			t.Errorf("warning %+v: want one naming upstream odd, not a collision", w)
		}
		var flagged []string
		for _, line := range strings.Split(logs.String(), "\n") {
			if strings.Contains(line, "catalog warning") && strings.Contains(line, `\"Search\"`) && strings.Contains(line, `\"search\"`) {
				flagged = append(flagged, line)
			}
		}
		if len(flagged) != 1 {
			t.Errorf("%d log lines flag Search and search, want 1:\n%s", len(flagged), logs.String())
		}
	})
}
