package proxy

//lint:file-ignore SA1019 these tests set the log level, which clients of 2025-11-25 still do

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// At the edge: a burst of exactly Burst passes, the next is dropped, the
// bucket refills at PerSecond, one warning per window whatever the number
// dropped, and a list change is never dropped.
func TestNotificationRateLimitEdge(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs syncBuffer
		m := NewMetrics()
		n := newNotifyLimiter("up", NotificationLimit{PerSecond: 10, Burst: 5}, slog.New(slog.NewTextHandler(&logs, nil)), m)
		msg := string(mcp.MethodNotificationMessage)
		for i := range 5 {
			if !n.allow(msg) {
				t.Fatalf("notification %d of a burst of 5 dropped", i+1)
			}
		}
		if n.allow(msg) {
			t.Error("the 6th notification of a burst of 5 passed")
		}
		if !n.allow(string(mcp.MethodNotificationToolsListChanged)) {
			t.Error("a list change was dropped")
		}
		for range 50 {
			n.allow(string(mcp.MethodNotificationProgress))
		}
		time.Sleep(300 * time.Millisecond) // the fake clock: 3 tokens back
		passed := 0
		for range 20 {
			if n.allow(msg) {
				passed++
			}
		}
		if passed != 3 {
			t.Errorf("300ms at 10 a second: %d passed, want 3", passed)
		}
		if got := strings.Count(logs.String(), "over the rate limit"); got != 1 {
			t.Errorf("got %d warnings within one window, want 1:\n%s", got, logs.String())
		}
		time.Sleep(notificationWarnEvery)
		for range 30 {
			n.allow(msg)
		}
		if got := strings.Count(logs.String(), "over the rate limit"); got != 2 {
			t.Errorf("got %d warnings over two windows, want 2", got)
		}
		s := scrapeMetrics(t, m)
		if got := s[`mcp_router_upstream_notifications_dropped_total{kind="progress",upstream="up"}`]; got != 50 {
			t.Errorf("dropped progress: got %v, want 50", got)
		}
		// 1 after the first burst, 17 after the refill, then 30 less the 5 of a full bucket.
		if got := s[`mcp_router_upstream_notifications_dropped_total{kind="message",upstream="up"}`]; got != 1+17+25 {
			t.Errorf("dropped messages: got %v, want 43", got)
		}
	})
}

func TestNotificationRateDefaults(t *testing.T) {
	l := NotificationLimit{}.withDefaults()
	if l.PerSecond != DefaultNotificationsPerSecond || l.Burst != DefaultNotificationBurst {
		t.Errorf("got %+v, want the defaults", l)
	}
}

// floodServer's flood tool sends n log messages and, with a progress
// token, n progress notifications.
func floodServer() *server.MCPServer {
	s := server.NewMCPServer("flood", "1", server.WithToolCapabilities(true), server.WithLogging())
	s.AddTool(mcp.NewTool("flood", mcp.WithNumber("n", mcp.Required())), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		srv := server.ServerFromContext(ctx)
		n := req.GetInt("n", 0)
		var token mcp.ProgressToken
		if req.Params.Meta != nil {
			token = req.Params.Meta.ProgressToken
		}
		for i := range n {
			_ = srv.SendLogMessageToClient(ctx, mcp.NewLoggingMessageNotification(mcp.LoggingLevelError, "flood", "flood"))
			if token != nil {
				_ = srv.SendNotificationToClient(ctx, string(mcp.MethodNotificationProgress),
					map[string]any{"progressToken": token, "progress": float64(i + 1)})
			}
		}
		return mcp.NewToolResultText("flooded"), nil
	})
	return s
}

// An upstream that floods its client with log messages and progress: the
// client gets no more than the bucket holds, the rest is counted dropped,
// and the gateway warns once.
func TestNotificationRateLimitsAFloodingUpstream(t *testing.T) {
	var logs syncBuffer
	m := NewMetrics()
	h := startHubWith(t, Options{
		Upstreams:     []UpstreamConfig{{Name: "fl", Transport: TransportBuiltin, Builtin: "flood", Prefix: "fl_"}},
		Builtin:       func(string, []string) (*server.MCPServer, error) { return floodServer(), nil },
		Logger:        slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn})),
		Metrics:       m,
		Notifications: NotificationLimit{PerSecond: 0.001, Burst: 20},
	})
	c := overStdioWith(t, ServerOptions{Hub: h})
	if err := c.session.SetLoggingLevel(t.Context(), &sdk.SetLoggingLevelParams{Level: "debug"}); err != nil {
		t.Fatal(err)
	}
	const n = 200 // mcp-go's own buffers drop some of a flood this fast before it reaches the gateway
	p := &sdk.CallToolParams{Name: "fl_flood", Arguments: map[string]any{"n": n}}
	p.SetProgressToken("t")
	if _, err := c.session.CallTool(t.Context(), p); err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, "notifications past the burst counted dropped", func() bool {
		s := scrapeMetrics(t, m)
		return s[`mcp_router_upstream_notifications_dropped_total{kind="message",upstream="fl"}`]+
			s[`mcp_router_upstream_notifications_dropped_total{kind="progress",upstream="fl"}`] >= 50
	})
	c.mu.Lock()
	got := len(c.logs) + len(c.progress)
	c.mu.Unlock()
	if got > 20 {
		t.Errorf("the client got %d notifications, want at most the burst of 20", got)
	}
	if w := strings.Count(logs.String(), "over the rate limit"); w != 1 {
		t.Errorf("got %d warnings, want 1", w)
	}
}
