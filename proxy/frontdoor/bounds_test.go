package frontdoor

// Bounds on each downstream HTTP client, each tested at its edge: sessions
// per client, requests in flight per session, request bodies held in
// memory, the body, header and idle timeouts.

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

func withToken(token string, hdr map[string]string) map[string]string {
	out := map[string]string{"Authorization": "Bearer " + token}
	for k, v := range hdr {
		out[k] = v
	}
	return out
}

// A client has at most MaxSessionsPerClient sessions: the next initialize
// gets 429, and a DELETE makes room. With tokens, each token is a client.
func TestBoundDownstreamHTTPSessionsPerClient(t *testing.T) {
	t.Run("by address", func(t *testing.T) {
		g := newGuarded(t, Options{MaxSessionsPerClient: 2})
		first := g.initialize(t, nil)
		g.initialize(t, nil)
		reached := g.reached()
		wantRefusal(t, g.post(t, initializeBody, nil), http.StatusTooManyRequests, "2 sessions open")
		if g.reached() != reached {
			t.Error("the refused initialize reached the MCP server")
		}
		if r := g.send(t, http.MethodDelete, nil, inSession(first)); r.status != http.StatusOK {
			t.Fatalf("DELETE: got %d %s", r.status, r.body)
		}
		g.initialize(t, nil) // room again
	})
	t.Run("by token", func(t *testing.T) {
		const alice, bob = "alice-token-0123456789", "bob-token-9876543210"
		g := newGuarded(t, Options{BearerTokens: []string{alice, bob}, MaxSessionsPerClient: 1})
		g.initialize(t, withToken(alice, nil))
		wantRefusal(t, g.post(t, initializeBody, withToken(alice, nil)), http.StatusTooManyRequests, "1 sessions open")
		g.initialize(t, withToken(bob, nil)) // another client
	})
	t.Run("concurrent initializes", func(t *testing.T) {
		g := newGuarded(t, Options{MaxSessionsPerClient: 3})
		var wg sync.WaitGroup
		var mu sync.Mutex
		statuses := map[int]int{}
		for range 10 {
			wg.Go(func() {
				r, err := g.do(t.Context(), initializeBody, nil)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				statuses[r.status]++
				mu.Unlock()
			})
		}
		wg.Wait()
		if statuses[http.StatusOK] != 3 || statuses[http.StatusTooManyRequests] != 7 {
			t.Errorf("10 initializes at once with room for 3: got statuses %v, want 3 × 200 and 7 × 429", statuses)
		}
	})
}

// A session opened through a reservation counts once from the moment it
// is bound, though its response is still being written: the reservation
// turns into the session, so a client at max-1 sessions can still open one
// while another's response is in flight.
func TestBoundSessionsCountAReservationOnce(t *testing.T) {
	o := newOwners(time.Hour)
	now := time.Now()
	if !o.reserve("c", 2, now) {
		t.Fatal("first reservation refused")
	}
	o.bindReserved("s1", noPrincipal, "c", now)
	if got := sessionsOf(o, "c"); got != 1 {
		t.Fatalf("after bindReserved: %d sessions, want 1", got)
	}
	if !o.reserve("c", 2, now) {
		t.Fatal("a second session with room for 2 was refused: the first counted twice")
	}
	if o.reserve("c", 2, now) {
		t.Fatal("a third reservation with room for 2 was granted")
	}
	o.unreserve("c")
	o.forget("s1")
	if len(o.clients) != 0 {
		t.Errorf("client entries left after every session and reservation ended: %v", o.clients)
	}
}

// hangBody is a call of the fake's hang tool, which answers only when
// cancelled.
func hangBody(id int) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"hang","arguments":{}}}`, id)
}

// eventually waits until cond holds, polling, and fails the test after
// timeout.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-deadline.C:
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		case <-tick.C:
		}
	}
}

// hang starts n hanging calls in session sid and waits until they reached
// the MCP server; cancelling ctx ends them.
func (g *guarded) hang(t *testing.T, ctx context.Context, hdr map[string]string, n int) *sync.WaitGroup {
	t.Helper()
	before := g.reached()
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { _, _ = g.do(ctx, hangBody(100+i), hdr) })
	}
	eventually(t, 5*time.Second, "the hanging calls to reach the server", func() bool { return g.reached() >= before+n })
	return &wg
}

// A session has at most MaxStreamsPerSession requests in flight: the next
// call gets 429, while a notification (a cancellation) and a DELETE pass.
func TestBoundDownstreamHTTPStreamsPerSession(t *testing.T) {
	g := newGuarded(t, Options{MaxStreamsPerSession: 2})
	sid := g.initialize(t, nil)
	ctx, cancel := context.WithCancel(t.Context())
	hung := g.hang(t, ctx, inSession(sid), 2)
	wantRefusal(t, g.post(t, toolsListBody, inSession(sid)), http.StatusTooManyRequests, "2 requests open")
	cancelled := `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":100}}`
	if r := g.post(t, cancelled, inSession(sid)); r.status != http.StatusAccepted {
		t.Errorf("a cancellation at the limit: got %d %s, want 202", r.status, r.body)
	}
	other := g.initialize(t, nil) // another session of the same client has its own streams
	if r := g.post(t, toolsListBody, inSession(other)); r.status != http.StatusOK {
		t.Errorf("another session: got %d %s, want 200", r.status, r.body)
	}
	cancel()
	hung.Wait()
	eventually(t, 5*time.Second, "room once the calls ended", func() bool {
		return g.post(t, toolsListBody, inSession(sid)).status == http.StatusOK
	})
	if r := g.send(t, http.MethodDelete, nil, inSession(sid)); r.status != http.StatusOK {
		t.Errorf("DELETE: got %d %s, want 200", r.status, r.body)
	}
}

// A client that holds its standalone GET stream open (as mcp-go's does
// with continuous listening) still has DefaultMaxStreamsPerSession calls
// in flight on that session: the stream takes no room from the calls,
// and none of 32 slow calls is refused.
func TestBoundHTTPStreamDoesNotCountAgainstCalls(t *testing.T) {
	g := newGuarded(t, Options{})
	//lint:ignore SA1019 the standalone GET stream of a 2025-11-25 session is what this test holds open
	tr, err := transport.NewStreamableHTTP(g.URL, transport.WithContinuousListening(), transport.WithHTTPBasicClient(g.client))
	if err != nil {
		t.Fatal(err)
	}
	c := client.NewClient(tr, client.WithProtocolVersion("2025-11-25"))
	if err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := c.Initialize(t.Context(), mcp.InitializeRequest{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, "the client's GET stream to reach the server", func() bool { return g.gets() == 1 })
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	before := g.reached()
	refused := make(chan error, DefaultMaxStreamsPerSession)
	var wg sync.WaitGroup
	for range DefaultMaxStreamsPerSession {
		wg.Go(func() {
			req := mcp.CallToolRequest{}
			req.Params.Name = "hang"
			if _, err := c.CallTool(ctx, req); err != nil && ctx.Err() == nil {
				refused <- err
			}
		})
	}
	deadline := time.NewTimer(10 * time.Second)
	defer deadline.Stop()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for g.reached() < before+DefaultMaxStreamsPerSession {
		select {
		case err := <-refused:
			t.Fatalf("a call with the GET stream open and fewer than %d calls in flight: %v", DefaultMaxStreamsPerSession, err)
		case <-deadline.C:
			t.Fatalf("%d of %d calls reached the server", g.reached()-before, DefaultMaxStreamsPerSession)
		case <-tick.C:
		}
	}
	cancel()
	wg.Wait()
}

// Streams and calls are capped apart: with room for one of each, a
// second stream is refused while a call still enters, and the reverse.
func TestBoundStreamsAndCallsCountedApart(t *testing.T) {
	o := newOwners(time.Hour)
	now := time.Now()
	bindSession(t, o, "s", noPrincipal, "c", now)
	const stream, call = true, false
	for _, step := range []struct {
		stream bool
		want   admission
	}{{stream, admitted}, {stream, tooManyStreams}, {call, admitted}, {call, tooManyStreams}} {
		if got := o.enter("s", noPrincipal, false, 1, step.stream, now); got != step.want {
			t.Fatalf("enter (stream %v) with one stream and one call allowed: got %v, want %v", step.stream, got, step.want)
		}
	}
	o.leave("s", stream, now)
	if got := o.enter("s", noPrincipal, false, 1, call, now); got != tooManyStreams {
		t.Errorf("a call after the stream ended, its call still in flight: got %v, want tooManyStreams", got)
	}
	if got := o.enter("s", noPrincipal, false, 1, stream, now); got != admitted {
		t.Errorf("a stream after the stream ended: got %v, want admitted", got)
	}
}

// gets is how many GET requests got past Guard.
func (g *guarded) gets() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	n := 0
	for _, r := range g.seen {
		if r.Method == http.MethodGet {
			n++
		}
	}
	return n
}

// Bodies held in memory at once are bounded: two calls in flight whose
// bodies fill the bound exactly leave no room for a third body (503 with
// Retry-After, not reaching the server), and room comes back when a call
// ends.
func TestBoundDownstreamHTTPBodyMemory(t *testing.T) {
	hang := int64(len(hangBody(100)))
	if 2*hang < int64(len(initializeBody)) {
		t.Fatal("the test needs two hang calls to hold at least an initialize body")
	}
	g := newGuarded(t, Options{MaxBodyBytes: int64(len(initializeBody)), MaxBodyMemory: 2 * hang})
	sid := g.initialize(t, nil)
	ctx, cancel := context.WithCancel(t.Context())
	hung := g.hang(t, ctx, inSession(sid), 2)
	reached := g.reached()
	r := g.post(t, toolsListBody, inSession(sid))
	wantRefusal(t, r, http.StatusServiceUnavailable, "request bodies")
	if r.header.Get("Retry-After") == "" {
		t.Error("503 without Retry-After")
	}
	if g.reached() != reached {
		t.Error("the refused request reached the MCP server")
	}
	cancel()
	hung.Wait()
	eventually(t, 5*time.Second, "room once a call ended", func() bool {
		return g.post(t, toolsListBody, inSession(sid)).status == http.StatusOK
	})
}

func TestBoundDownstreamHTTPByteBudget(t *testing.T) {
	b := Guard(nil, Options{MaxBodyMemory: 10, MaxBodyBytes: 10}).(*guard).bodies
	if !b.TryAcquire(6) || !b.TryAcquire(4) {
		t.Fatal("10 bytes did not fit a budget of 10")
	}
	if b.TryAcquire(1) {
		t.Error("an 11th byte fitted a budget of 10")
	}
	b.Release(4)
	if !b.TryAcquire(4) || b.TryAcquire(1) {
		t.Error("giving back 4 did not make room for exactly 4")
	}
}

// A body slower than BodyTimeout gets 408; one within it is served.
func TestBoundDownstreamHTTPBodyTimeout(t *testing.T) {
	g := newGuarded(t, Options{BodyTimeout: 300 * time.Millisecond})
	host := strings.TrimPrefix(strings.TrimSuffix(g.URL, "/mcp"), "http://")
	conn, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	head := fmt.Sprintf("POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\n"+
		"Accept: application/json, text/event-stream\r\nContent-Length: %d\r\n\r\n", host, len(initializeBody))
	start := time.Now()
	if _, err := io.WriteString(conn, head+initializeBody[:10]); err != nil { // and the rest never
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer to a stalled body: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestTimeout {
		t.Errorf("a stalled body: got %d, want 408", resp.StatusCode)
	}
	if d := time.Since(start); d < 300*time.Millisecond {
		t.Errorf("refused after %s, before the body timeout of 300ms", d)
	}
	g.initialize(t, nil) // a body sent at once is served
}

// The server's header and idle timeouts close connections that send no
// headers, or no next request.
func TestBoundDownstreamHTTPServerTimeouts(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := NewHTTPServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") }),
		HTTPServerOptions{HeaderTimeout: 200 * time.Millisecond, IdleTimeout: 300 * time.Millisecond})
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close(); <-done })
	closedWithin := func(t *testing.T, conn net.Conn, r *bufio.Reader, least time.Duration) {
		t.Helper()
		start := time.Now()
		_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		_, err := r.ReadByte()
		if err == nil || strings.Contains(err.Error(), "timeout") {
			t.Fatalf("the server did not close the connection: %v", err)
		}
		if d := time.Since(start); d < least/2 {
			t.Errorf("closed after %s, want about %s", d, least)
		}
	}
	t.Run("header", func(t *testing.T) {
		conn, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		_, _ = io.WriteString(conn, "GET / HTTP/1.1\r\nHost: x\r\n") // and no end of headers
		r := bufio.NewReader(conn)
		_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		// Go answers a header timeout with nothing, or with 408, then closes.
		if resp, err := http.ReadResponse(r, nil); err == nil {
			resp.Body.Close()
			if resp.StatusCode != http.StatusRequestTimeout {
				t.Errorf("slow headers: got %d, want 408 or a closed connection", resp.StatusCode)
			}
		}
	})
	t.Run("idle", func(t *testing.T) {
		conn, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		_, _ = io.WriteString(conn, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
		r := bufio.NewReader(conn)
		resp, err := http.ReadResponse(r, nil)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		closedWithin(t, conn, r, 300*time.Millisecond)
	})
	if s := NewHTTPServer(nil, HTTPServerOptions{}); s.ReadHeaderTimeout != DefaultHeaderTimeout || s.IdleTimeout != DefaultIdleTimeout {
		t.Errorf("defaults: got %s and %s", s.ReadHeaderTimeout, s.IdleTimeout)
	}
}
