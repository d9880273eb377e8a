package proxy

// Who the caller is without a session (2026-07-28): two principals' calls
// in flight on one upstream are two callers, never one caller with an
// empty session id.

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-router/mcp-router/internal/fakeupstream"
	"github.com/mcp-router/mcp-router/proxy/frontdoor"
)

// notRelayed counts the upstream log messages the hub kept to its own log
// because it could not tell whose call they belonged to.
type notRelayed struct {
	mu sync.Mutex
	n  int
}

func (c *notRelayed) Enabled(context.Context, slog.Level) bool { return true }
func (c *notRelayed) WithAttrs([]slog.Attr) slog.Handler       { return c }
func (c *notRelayed) WithGroup(string) slog.Handler            { return c }
func (c *notRelayed) Handle(_ context.Context, r slog.Record) error {
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "not_relayed" && r.Message == "upstream log" {
			c.mu.Lock()
			c.n++
			c.mu.Unlock()
		}
		return true
	})
	return nil
}

func (c *notRelayed) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// loggingUpstream is an mcp-go server over streamable HTTP whose work tool
// waits for the calls of both clients (arrived), reports progress and
// sends a log message naming who called (the log a notification that
// names no call), and answers once released.
func loggingUpstream(t *testing.T, arrived *rendezvous, release <-chan struct{}) UpstreamConfig {
	t.Helper()
	srv := fakeupstream.New("logs")
	srv.AddTool(mcp.NewTool("work", mcp.WithString("who")), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		who := req.GetString("who", "")
		arrived.wait(ctx, who)
		if m := req.Params.Meta; m != nil && m.ProgressToken != nil {
			_ = server.ServerFromContext(ctx).SendNotificationToClient(ctx, string(mcp.MethodNotificationProgress),
				map[string]any{"progressToken": m.ProgressToken, "progress": 1, "message": "progress for " + who})
		}
		_ = server.ServerFromContext(ctx).SendLogMessageToClient(ctx,
			mcp.NewLoggingMessageNotification(mcp.LoggingLevelWarning, "logs", "log for "+who))
		select {
		case <-release:
		case <-ctx.Done():
		}
		return mcp.NewToolResultText("done for " + who), nil
	})
	ts := httptest.NewServer(server.NewStreamableHTTPServer(srv))
	t.Cleanup(ts.Close)
	return UpstreamConfig{Name: "logs", Transport: TransportStreamableHTTP, URL: ts.URL + "/mcp", Prefix: "logs_"}
}

// Two principals (two bearer tokens) on the stateless protocol, each with
// a call in flight on one upstream that reports progress and logs for
// each: neither hears the other's. Both use the same progress token; each
// call's progress reaches its caller alone. The log messages name no call,
// so with both in flight the gateway keeps them to its own log; before,
// both calls had the same empty session id and the newest heard both.
func TestNoCrossPrincipalLogsWithoutASession(t *testing.T) {
	arrived, release := newRendezvous(), make(chan struct{})
	dropped := &notRelayed{}
	hub := startHubWith(t, Options{Upstreams: []UpstreamConfig{loggingUpstream(t, arrived, release)},
		Builtin: fakeBuiltins, Logger: slog.New(dropped)})
	srv := NewServer(ServerOptions{Hub: hub})
	t.Cleanup(srv.Close)
	ts := httptest.NewServer(frontdoor.Guard(srv.HTTPHandler(), frontdoor.Options{BearerTokens: []string{"token-a", "token-b"}}))
	t.Cleanup(ts.Close)
	a := connectCrossEra(t, ts.URL+"/mcp", "token-a", "A", nil)
	b := connectCrossEra(t, ts.URL+"/mcp", "token-b", "B", nil)

	var wg sync.WaitGroup
	results := make([]string, 2)
	for i, c := range []*crossClient{a, b} {
		wg.Go(func() {
			p := &sdk.CallToolParams{Name: "logs_work", Arguments: map[string]any{"who": c.name},
				Meta: sdk.Meta{"io.modelcontextprotocol/logLevel": "debug"}}
			p.SetProgressToken("the-same-token")
			res, err := c.session.CallTool(t.Context(), p)
			if err != nil {
				results[i] = "error: " + err.Error()
				return
			}
			results[i] = resultText(res)
		})
	}
	arrived.open(t)
	// Both calls stay in flight until each log message has been relayed
	// to someone or kept back.
	eventually(t, 10*time.Second, "both log messages to be relayed or kept back", func() bool {
		_, _, la, _ := a.seen()
		_, _, lb, _ := b.seen()
		return len(la)+len(lb)+dropped.count() >= 2
	})
	close(release)
	wg.Wait()
	for i, c := range []*crossClient{a, b} {
		if want := "done for " + c.name; results[i] != want {
			t.Errorf("client %s's call: got %q, want %q", c.name, results[i], want)
		}
		_, _, logs, progress := c.seen()
		if other := slices.DeleteFunc(slices.Clone(logs), func(l string) bool { return l == "log for "+c.name }); len(other) > 0 {
			t.Errorf("client %s heard %q, another principal's log messages", c.name, other)
		}
		if want := []string{"progress for " + c.name}; !slices.Equal(progress, want) {
			t.Errorf("client %s got progress %q, want %q", c.name, progress, want)
		}
	}
}
