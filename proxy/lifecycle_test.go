package proxy

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcp-router/mcp-router/internal/fakeupstream"
	"github.com/mcp-router/mcp-router/proxy/call"
)

// countingSleeps is the fake upstream "remote" whose sleep counts the
// calls that reached it in arrived.
func countingSleeps(arrived *atomic.Int32) *server.MCPServer {
	s := fakeupstream.New("remote")
	s.AddTool(mcp.NewTool("sleep", mcp.WithNumber("ms")), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		arrived.Add(1)
		select {
		case <-time.After(time.Duration(req.GetFloat("ms", 0)) * time.Millisecond):
			return mcp.NewToolResultText("slept"), nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	})
	return s
}

// TestLifecycleHTTPUpstreamSurvivesOneBadReply: with calls in flight on
// an HTTP upstream, a reply that is an HTTP 500 or a stream cut mid-way
// fails the call it answers and no other: the calls in flight finish
// with their results, and the upstream stays connected.
func TestLifecycleHTTPUpstreamSurvivesOneBadReply(t *testing.T) {
	for _, bad := range []string{"http-500", "cut-json", "cut-sse-chunk", "cut-sse-event", "sse/http-500"} {
		t.Run(bad, func(t *testing.T) {
			var arrived atomic.Int32 // sleep calls the upstream has had
			up := UpstreamConfig{Name: "remote", Transport: TransportStreamableHTTP, Prefix: "remote_", Timeout: 10 * time.Second}
			var mcpHandler interface {
				http.Handler
				Shutdown(context.Context) error
			} = server.NewStreamableHTTPServer(countingSleeps(&arrived))
			path := "/mcp"
			if sse, ok := strings.CutPrefix(bad, "sse/"); ok {
				bad, path, up.Transport = sse, "/sse", TransportSSE
				mcpHandler = server.NewSSEServer(countingSleeps(&arrived))
			}
			ts := httptest.NewServer(echoingErrors{next: cutter{next: mcpHandler}})
			t.Cleanup(ts.Close)
			t.Cleanup(func() { mcpHandler.Shutdown(context.Background()) })
			up.URL = ts.URL + path
			h := startHub(t, up)
			const inFlight = 3
			var wg sync.WaitGroup
			errs := make(chan error, inFlight)
			for range inFlight {
				wg.Add(1)
				go func() {
					defer wg.Done()
					res, err := h.CallTool(t.Context(), "remote_sleep", map[string]any{"ms": 700}, nil)
					if err == nil && res.IsError {
						err = &UpstreamError{Kind: call.KindUpstreamError, Tool: "remote_sleep"}
					}
					errs <- err
				}()
			}
			eventually(t, 5*time.Second, "calls in flight", func() bool { return arrived.Load() == inFlight })
			if _, err := h.CallTool(t.Context(), "remote_echo", map[string]any{"text": bad}, nil); err == nil {
				t.Errorf("%s: the bad reply gave no error", bad)
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Errorf("a call in flight failed with the bad reply: %v", err)
				}
			}
			if s := statusOf(h, "remote"); s.State != StateConnected || s.Restarts != 0 {
				t.Errorf("after one bad reply: %+v, want connected with no restart", s)
			}
		})
	}
}
