package proxy

//lint:file-ignore SA1019 these tests set the log level, which clients of 2025-11-25 still do

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

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
