package bridge

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// recorder is a real mcp-go streamable HTTP server that notes each
// request's method and session id, and can be told to fail tools/call.
type recorder struct {
	next  http.Handler
	noted chan struct{} // a token once a request was noted, for await

	mu      sync.Mutex
	seen    []string                                      // "METHOD session"
	failing func(w http.ResponseWriter, body string) bool // answers instead of next when true
}

func (r *recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	req.Body = io.NopCloser(strings.NewReader(string(body)))
	r.mu.Lock()
	r.seen = append(r.seen, req.Method+" "+req.Header.Get("Mcp-Session-Id"))
	fail := r.failing
	r.mu.Unlock()
	select {
	case r.noted <- struct{}{}:
	default: // a token waits already
	}
	if fail != nil && fail(w, string(body)) {
		return
	}
	r.next.ServeHTTP(w, req)
}

func (r *recorder) requests() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.seen...)
}

// await waits until a request with method and a session id has reached
// the gateway, and returns it as noted.
func (r *recorder) await(t *testing.T, method string) string {
	t.Helper()
	timeout := time.NewTimer(10 * time.Second)
	defer timeout.Stop()
	for {
		for _, req := range r.requests() {
			if m, sid, _ := strings.Cut(req, " "); m == method && sid != "" {
				return req
			}
		}
		select {
		case <-r.noted:
		case <-timeout.C:
			t.Fatalf("requests %q: no %s of the session", r.requests(), method)
		}
	}
}

func newGateway(t *testing.T) (*recorder, *httptest.Server) {
	t.Helper()
	s := server.NewMCPServer("gw", "1", server.WithToolCapabilities(true))
	s.AddTool(mcp.NewTool("echo", mcp.WithString("text")), func(_ context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText(r.GetString("text", "")), nil
	})
	s.AddTool(mcp.NewTool("big", mcp.WithNumber("bytes")), func(_ context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText(strings.Repeat("x", int(r.GetFloat("bytes", 0)))), nil
	})
	rec := &recorder{next: server.NewStreamableHTTPServer(s), noted: make(chan struct{}, 1)}
	ts := httptest.NewServer(rec)
	t.Cleanup(ts.Close)
	return rec, ts
}

// session runs a Bridge on pipes: send writes a line to its stdin, next
// reads a line of its stdout, end closes stdin and waits for Run.
type session struct {
	t     *testing.T
	in    *io.PipeWriter
	lines chan string
	done  chan error
}

func startBridge(t *testing.T, opts Options) *session {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	s := &session{t: t, in: inW, lines: make(chan string, 100), done: make(chan error, 1)}
	go func() {
		err := New(opts).Run(t.Context(), inR, outW)
		inR.Close()
		outW.Close()
		s.done <- err
	}()
	go func() {
		defer close(s.lines)
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 8<<20)
		for sc.Scan() {
			s.lines <- sc.Text()
		}
	}()
	t.Cleanup(func() { s.in.Close(); <-s.done })
	return s
}

func (s *session) send(msg string) {
	s.t.Helper()
	if _, err := io.WriteString(s.in, msg+"\n"); err != nil {
		s.t.Fatal(err)
	}
}

// next returns the next message on stdout, decoded.
func (s *session) next() map[string]any {
	s.t.Helper()
	select {
	case l, ok := <-s.lines:
		if !ok {
			s.t.Fatal("stdout closed")
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			s.t.Fatalf("stdout line %q is not JSON: %v", l, err)
		}
		return m
	case <-time.After(10 * time.Second):
		s.t.Fatal("no message on stdout")
	}
	return nil
}

func (s *session) initialize() {
	s.t.Helper()
	s.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if m := s.next(); m["result"] == nil {
		s.t.Fatalf("initialize: got %v", m)
	}
	s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

func errorMessage(m map[string]any) string {
	e, _ := m["error"].(map[string]any)
	msg, _ := e["message"].(string)
	return msg
}

// The bridge relays a call, and once stdin ends it ends the session with
// DELETE, after everything else it sent. The standalone event stream
// opens in the background once the session is initialized, and the test
// waits for the gateway to have its GET before stdin ends: a GET that the
// bridge cancels before the gateway has read it may still be read after
// the DELETE, and the bridge cannot tell whether it was.
func TestBridgeRelaysAndEndsTheSessionOnEOF(t *testing.T) {
	rec, ts := newGateway(t)
	s := startBridge(t, Options{URL: ts.URL + "/mcp", Header: http.Header{"X-Team": {"search"}}})
	s.initialize()
	s.send(`{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`)
	m := s.next()
	if m["id"] != "a" || !strings.Contains(fmt.Sprint(m["result"]), "hi") {
		t.Errorf("tools/call: got %v", m)
	}
	_, sid, _ := strings.Cut(rec.await(t, http.MethodGet), " ")
	s.in.Close()
	if err := <-s.done; err != nil {
		t.Errorf("Run: %v", err)
	}
	s.done <- nil // for the cleanup
	reqs := rec.requests()
	if last := reqs[len(reqs)-1]; last != "DELETE "+sid {
		t.Errorf("requests %q: want the last to DELETE session %s", reqs, sid)
	}
}

// BI-01, FI-12: input that is not a message, or is too large, gets an
// error answer, and the stream goes on.
func TestBridgeRefusesBadInput(t *testing.T) {
	_, ts := newGateway(t)
	s := startBridge(t, Options{URL: ts.URL + "/mcp", MaxMessageBytes: 1024})
	s.initialize()
	tests := []struct{ in, want string }{
		{`{"jsonrpc":"2.0","id":2,"method":"ping","params":{"pad":"` + strings.Repeat("x", 2000) + `"}}`, "larger than 1024 bytes"},
		{`this is not json`, "parse error"},
		{`{"jsonrpc":"2.0","id":3}`, "not a JSON-RPC request"},
	}
	for _, tt := range tests {
		s.send(tt.in)
		if m := s.next(); !strings.Contains(errorMessage(m), tt.want) {
			t.Errorf("%.40s: got %v, want an error saying %q", tt.in, m, tt.want)
		}
	}
	s.send(`{"jsonrpc":"2.0","id":4,"method":"ping"}`)
	if m := s.next(); m["id"] != float64(4) || m["result"] == nil {
		t.Errorf("ping after bad input: got %v", m)
	}
}

// BI-04: a request id already waiting, or one request too many, is
// refused by the bridge; the requests in flight are unaffected.
func TestBridgeBoundsRequestsInFlight(t *testing.T) {
	rec, ts := newGateway(t)
	s := startBridge(t, Options{URL: ts.URL + "/mcp", MaxInFlight: 2})
	s.initialize()
	release := make(chan struct{})
	rec.mu.Lock()
	rec.failing = func(w http.ResponseWriter, body string) bool {
		if !strings.Contains(body, `"held"`) {
			return false
		}
		<-release
		return false
	}
	rec.mu.Unlock()
	held := `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":"held"}}}`
	s.send(fmt.Sprintf(held, 1))
	s.send(fmt.Sprintf(held, 1))
	if m := s.next(); m["id"] != float64(1) || !strings.Contains(errorMessage(m), "already in use") {
		t.Errorf("a reused id: got %v", m)
	}
	s.send(fmt.Sprintf(held, 2))
	s.send(fmt.Sprintf(held, 3))
	if m := s.next(); m["id"] != float64(3) || !strings.Contains(errorMessage(m), "at most 2") {
		t.Errorf("a third request: got %v", m)
	}
	close(release)
	got := map[float64]bool{}
	for range 2 {
		m := s.next()
		got[m["id"].(float64)] = m["result"] != nil
	}
	if !got[1] || !got[2] {
		t.Errorf("the requests in flight: got %v, want 1 and 2 answered", got)
	}
}

// When HTTP fails the waiting request gets an error that says why; a
// request the client cancelled gets none; a message over the bound is
// refused.
func TestBridgeAnswersWhenTheGatewayFails(t *testing.T) {
	rec, ts := newGateway(t)
	s := startBridge(t, Options{URL: ts.URL + "/mcp", MaxMessageBytes: 64 << 10})
	s.initialize()
	cancelSeen, cancelEnded := make(chan struct{}), make(chan struct{})
	rec.mu.Lock()
	rec.failing = func(w http.ResponseWriter, body string) bool {
		switch {
		case strings.Contains(body, "notifications/cancelled"):
			close(cancelSeen)
			return false
		case strings.Contains(body, `"cancel-me"`):
			defer close(cancelEnded)
			<-cancelSeen
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK) // the call ends unanswered, as cancelled
		case strings.Contains(body, `"boom"`):
			http.Error(w, "upstream exploded", http.StatusBadGateway)
		case strings.Contains(body, `"silent"`):
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK) // and end without an answer
		case strings.Contains(body, `"gone"`):
			http.Error(w, "Session not found", http.StatusNotFound)
		default:
			return false
		}
		return true
	}
	rec.mu.Unlock()
	tests := []struct{ tool, want string }{
		{"boom", "answered HTTP 502: upstream exploded"},
		{"silent", "ended the response without answering"},
		{"gone", "no longer knows this session"},
		{"big", "larger than 65536 bytes"},
	}
	for i, tt := range tests {
		s.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":{"bytes":100000}}}`, 10+i, tt.tool))
		m := s.next()
		if m["id"] != float64(10+i) || !strings.Contains(errorMessage(m), tt.want) {
			t.Errorf("%s: got %v, want an error saying %q", tt.tool, m, tt.want)
		}
	}
	s.send(`{"jsonrpc":"2.0","id":20,"method":"tools/call","params":{"name":"cancel-me"}}`)
	s.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":20}}`)
	<-cancelEnded
	for _, id := range []float64{21, 22} { // two round trips: time for the ended stream to be read
		s.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%v,"method":"ping"}`, id))
		if m := s.next(); m["id"] != id {
			t.Errorf("after a cancelled request: got %v, want only the ping's answer", m)
		}
	}
}
