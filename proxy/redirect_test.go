package proxy

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/server"

	"github.com/mcp-router/mcp-router/internal/fakeupstream"
	"github.com/mcp-router/mcp-router/proxy/internal/secrettest"
)

// elsewhere is another origin that counts what reaches it.
func elsewhere(t *testing.T) (*httptest.Server, *atomic.Int64) {
	var hits atomic.Int64
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		http.Error(w, "should not be here", http.StatusTeapot)
	}))
	t.Cleanup(ts.Close)
	return ts, &hits
}

// redirecting sends a tool call whose text is "away" to the other origin
// and one whose text is "here" to the same path on its own origin (307,
// so the body is sent again); the rest goes to next.
type redirecting struct {
	next  http.Handler
	other string
}

func (d redirecting) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, text, ok := postedCall(w, r)
	if !ok {
		return
	}
	switch {
	case text == "away" || r.URL.Path == "/away":
		http.Redirect(w, r, d.other+"/mcp", http.StatusTemporaryRedirect)
	case text == "here" && r.URL.Path == "/mcp":
		http.Redirect(w, r, "/moved/mcp", http.StatusTemporaryRedirect)
	default:
		d.next.ServeHTTP(w, r)
	}
}

// TestNoSecretLeavesThroughRedirects: an HTTP upstream that redirects to
// another origin, at connect or on a call, gets no request there (so no
// configured header, URL credential or body goes with it), and the error
// says the redirect was refused; a redirect within the origin is followed.
func TestNoSecretLeavesThroughRedirects(t *testing.T) {
	other, hits := elsewhere(t)
	mcpHandler := server.NewStreamableHTTPServer(fakeupstream.New("remote"))
	ts := httptest.NewServer(redirecting{next: mcpHandler, other: other.URL})
	t.Cleanup(ts.Close)
	t.Cleanup(func() { mcpHandler.Shutdown(context.Background()) })
	headers := map[string]string{"X-Api-Key": secrettest.Header}
	h := startHub(t,
		UpstreamConfig{Name: "remote", Transport: TransportStreamableHTTP, URL: ts.URL + "/mcp", Headers: headers, Prefix: "remote_"},
		UpstreamConfig{Name: "moved", Transport: TransportStreamableHTTP, URL: ts.URL + "/away", Headers: headers, Prefix: "moved_"},
		UpstreamConfig{Name: "movedsse", Transport: TransportSSE, URL: ts.URL + "/away", Headers: headers, Prefix: "movedsse_"})

	if got := callText(t, h, "remote_echo", map[string]any{"text": "here"}); got != "here" {
		t.Errorf("a redirect within the origin: got %q", got)
	}
	_, err := h.CallTool(t.Context(), "remote_echo", map[string]any{"text": "away"}, nil)
	if err == nil || !strings.Contains(err.Error(), "redirect to another origin refused") {
		t.Errorf("a call redirected away: got %v, want the redirect refused", err)
	}
	for _, name := range []string{"moved", "movedsse"} {
		eventually(t, 5*time.Second, name+" failed", func() bool { return statusOf(h, name).State == StateFailed })
		if s := statusOf(h, name); !strings.Contains(s.Err, "redirect to another origin refused") {
			t.Errorf("%s: status error %q, want the redirect refused", name, s.Err)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the other origin got %d requests", n)
	}
	if got := callText(t, h, "remote_echo", map[string]any{"text": "after"}); got != "after" {
		t.Errorf("after the refused redirect: %q", got)
	}
}
