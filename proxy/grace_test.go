package proxy

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// graceHTTP serves a fake "alpha" over streamable HTTP with the given
// grace period. Close runs before the
// HTTP server's, so that no call it detached holds that up. The fake runs
// in process (TestFI19HTTPClientDropsStream has a stdio one): its hang
// counts the calls that end cancelled either way.
func graceHTTP(t *testing.T, grace time.Duration) (*Hub, *Server, *httptest.Server) {
	t.Helper()
	h := startHub(t, builtinFake("alpha"))
	srv := NewServer(ServerOptions{Hub: h, DisconnectGrace: grace})
	ts := httptest.NewServer(srv.HTTPHandler())
	t.Cleanup(ts.Close)
	t.Cleanup(srv.Close)
	return h, srv, ts
}

// graceServer is graceHTTP with a raw client in a 2025-11-25 session.
func graceServer(t *testing.T, grace time.Duration) (*Hub, *Server, *faultHTTP) {
	t.Helper()
	h, srv, ts := graceHTTP(t, grace)
	c := &faultHTTP{url: ts.URL + "/mcp", client: ts.Client()}
	if v := c.initialize(t, "2025-11-25"); v != "2025-11-25" {
		t.Fatalf("initialize: version %q", v)
	}
	return h, srv, c
}

// startHang posts a call of alpha_hang with request id id (JSON) under ctx and
// returns its response once the upstream has the call (hang reports
// progress then).
func startHang(ctx context.Context, t *testing.T, c *faultHTTP, id string) *http.Response {
	t.Helper()
	resp, err := c.do(ctx, http.MethodPost, `{"jsonrpc":"2.0","id":`+id+`,"method":"tools/call","params":{"name":"alpha_hang",`+
		`"arguments":{},"_meta":{"progressToken":"t-`+strings.Trim(id, `"`)+`"}}}`)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if strings.Contains(sc.Text(), "notifications/progress") {
			return resp
		}
	}
	resp.Body.Close()
	t.Fatalf("the call's stream ended before the upstream had the call: %v", sc.Err())
	return nil
}

// dropCall starts a call of alpha_hang and drops its response stream
// without cancelling the call.
func dropCall(t *testing.T, c *faultHTTP, id string) {
	t.Helper()
	ctx, drop := context.WithCancel(t.Context())
	resp := startHang(ctx, t, c, id)
	drop()
	resp.Body.Close()
}

// FI-19: a dropped call is cancelled when the grace period runs out, with
// the session still open; the session goes on serving calls.
func TestFI19GraceRunsOutWhileSessionStaysOpen(t *testing.T) {
	h, _, c := graceServer(t, 2*time.Second)
	dropCall(t, c, "1")
	for deadline := time.Now().Add(500 * time.Millisecond); time.Now().Before(deadline); {
		if n := cancellations(t, h, "alpha_cancellations"); n != 0 {
			t.Fatalf("the upstream call was cancelled (%d) as the client dropped its stream, want after the grace period", n)
		}
	}
	eventually(t, faultWait, "the upstream call cancelled once the grace period ran out", func() bool {
		return cancellations(t, h, "alpha_cancellations") == 1
	})
	resp, err := c.do(t.Context(), http.MethodPost, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"alpha_echo","arguments":{"text":"still open"}}}`)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "still open") {
		t.Errorf("a call in the session after the grace period: %d %s", resp.StatusCode, body)
	}
}

// FI-19 with FI-21: a client that cancels a call on a stream it keeps
// open is heard at once, however long the grace period.
func TestFI19ExplicitCancelStillCancelsAtOnce(t *testing.T) {
	h, _, c := graceServer(t, time.Hour)
	resp := startHang(t.Context(), t, c, "1")
	defer resp.Body.Close()
	cancel, err := c.do(t.Context(), http.MethodPost,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"changed my mind"}}`)
	if err != nil {
		t.Fatal(err)
	}
	cancel.Body.Close()
	if cancel.StatusCode != http.StatusAccepted {
		t.Errorf("notifications/cancelled: status %d, want 202", cancel.StatusCode)
	}
	eventually(t, faultWait, "the upstream call cancelled at once", func() bool {
		return cancellations(t, h, "alpha_cancellations") == 1
	})
}

// FI-19 with FI-21: a client that drops the stream and then cancels is
// heard at once (the HTTP pre-check tells graces): mcp-go alone delivers that cancellation
// to a context that has already ended.
func TestFI19CancelAfterDropIsHeard(t *testing.T) {
	h, _, c := graceServer(t, time.Hour)
	dropCall(t, c, `"call-1"`)
	cancel, err := c.do(t.Context(), http.MethodPost,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"call-1"}}`)
	if err != nil {
		t.Fatal(err)
	}
	cancel.Body.Close()
	eventually(t, faultWait, "the upstream call cancelled at once", func() bool {
		return cancellations(t, h, "alpha_cancellations") == 1
	})
}

// FI-19 with FI-21: the official Go SDK cancels a call by aborting its
// POST and then sending notifications/cancelled; each cancellation
// reaches the upstream at once, grace period or not.
func TestFI19SDKClientCancelReachesUpstream(t *testing.T) {
	h, _, ts := graceHTTP(t, time.Hour)
	c := sdkOverHTTP(t, ts.URL)
	for i := 1; i <= 3; i++ {
		cancelHang(t, h, c, i)
	}
}

// cancelHang has c call alpha_hang and cancel it once the upstream has
// it, the i-th such call: the call ends cancelled, and so does the
// upstream's.
func cancelHang(t *testing.T, h *Hub, c *sdkClient, i int) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	params := &sdk.CallToolParams{Name: "alpha_hang", Arguments: map[string]any{}}
	params.SetProgressToken("p")
	done := make(chan error, 1)
	go func() {
		_, err := c.session.CallTool(ctx, params)
		done <- err
	}()
	eventually(t, faultWait, "the upstream to have the call", func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		return len(c.progress) >= i
	})
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("call %d: got %v, want context.Canceled", i, err)
	}
	eventually(t, faultWait, fmt.Sprintf("cancellation %d at the upstream", i), func() bool {
		return cancellations(t, h, "alpha_cancellations") == i
	})
}

// The Go SDK on 2026-07-28 cancels a call the same way, with no session:
// the aborted POST cancels the upstream call, and the
// notifications/cancelled it sends after, without the _meta protocol
// version (SEP-2575 asks that of requests only), is taken with a 202. A
// 400 there ended the SDK's connection: every later call failed.
func TestStatelessSDKClientCancelKeepsItsConnection(t *testing.T) {
	h, _, ts := graceHTTP(t, time.Hour)
	notes := make(chan int, 4) // the status of each notifications/cancelled POST
	cl, c := newSDKClient()
	tr := &sdk.StreamableClientTransport{Endpoint: ts.URL + "/mcp", MaxRetries: -1,
		HTTPClient: &http.Client{Transport: cancelStatus{http.DefaultTransport, notes}}}
	s, err := cl.Connect(t.Context(), tr, &sdk.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	c.session = s
	for i := 1; i <= 2; i++ {
		cancelHang(t, h, c, i)
		if status := <-notes; status != http.StatusAccepted {
			t.Fatalf("notifications/cancelled %d: HTTP %d, want 202", i, status)
		}
	}
	res, err := s.CallTool(t.Context(), &sdk.CallToolParams{Name: "alpha_echo", Arguments: map[string]any{"text": "still here"}})
	if err != nil || res.IsError {
		t.Fatalf("a call after the cancellations: %v %v, want its result", res, err)
	}
}

// cancelStatus sends to statuses the HTTP status of each
// notifications/cancelled its client posts.
type cancelStatus struct {
	next     http.RoundTripper
	statuses chan<- int
}

func (c cancelStatus) RoundTrip(r *http.Request) (*http.Response, error) {
	var body []byte
	if r.GetBody != nil {
		if b, err := r.GetBody(); err == nil {
			body, _ = io.ReadAll(b)
		}
	}
	resp, err := c.next.RoundTrip(r)
	if err == nil && strings.Contains(string(body), `"notifications/cancelled"`) {
		c.statuses <- resp.StatusCode
	}
	return resp, err
}

// FI-19: closing the server cancels the calls whose streams dropped.
func TestFI19CloseCancelsDroppedCalls(t *testing.T) {
	h, srv, c := graceServer(t, time.Hour)
	dropCall(t, c, "1")
	dropCall(t, c, "2")
	srv.Close()
	eventually(t, faultWait, "both upstream calls cancelled by Close", func() bool {
		return cancellations(t, h, "alpha_cancellations") == 2
	})
}

// FI-19: with no grace period (http.disconnect_grace: 0) a dropped stream
// cancels its call at once, as before.
func TestFI19NoGraceCancelsAtOnce(t *testing.T) {
	h, _, c := graceServer(t, -1)
	dropCall(t, c, "1")
	eventually(t, faultWait, "the upstream call cancelled as the stream dropped", func() bool {
		return cancellations(t, h, "alpha_cancellations") == 1
	})
}

// FI-19: a server given no grace period takes DefaultDisconnectGrace (the
// 30s of http.disconnect_grace unset); a negative one has none.
func TestDisconnectGraceDefault(t *testing.T) {
	h := newTestHub(t, Options{})
	for _, tc := range []struct{ in, want time.Duration }{{0, DefaultDisconnectGrace}, {2 * time.Minute, 2 * time.Minute}, {-1, 0}} {
		srv := NewServer(ServerOptions{Hub: h, DisconnectGrace: tc.in})
		var got time.Duration
		if srv.graces != nil {
			got = srv.graces.grace
		}
		srv.Close()
		if got != tc.want {
			t.Errorf("DisconnectGrace %s: got a grace of %s, want %s", tc.in, got, tc.want)
		}
	}
	if DefaultDisconnectGrace != 30*time.Second {
		t.Errorf("DefaultDisconnectGrace %s, want the 30s docs/reference.md gives", DefaultDisconnectGrace)
	}
}
