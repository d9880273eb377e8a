package proxy

// Who the caller is without a session (2026-07-28): two principals' calls
// in flight on one upstream are two callers, never one caller with an
// empty session id.

import (
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	mcpclient "github.com/mark3labs/mcp-go/client"
	mcptransport "github.com/mark3labs/mcp-go/client/transport"
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

// principalClient is one principal's client of the stateless protocol,
// recording the log messages and progress the gateway sends it.
type principalClient interface {
	// work calls logs_work as who, with the progress token both use.
	work(ctx context.Context, who string) (string, error)
	heard() (logs, progress []string)
}

// sdkPrincipal is the go-sdk's client.
type sdkPrincipal struct{ *crossClient }

func (c sdkPrincipal) work(ctx context.Context, who string) (string, error) {
	p := &sdk.CallToolParams{Name: "logs_work", Arguments: map[string]any{"who": who},
		Meta: sdk.Meta{mcp.MetaKeyLogLevel: "debug"}}
	p.SetProgressToken("the-same-token")
	res, err := c.session.CallTool(ctx, p)
	if err != nil {
		return "", err
	}
	return resultText(res), nil
}

func (c sdkPrincipal) heard() (logs, progress []string) {
	_, _, logs, progress = c.seen()
	return logs, progress
}

// mcpgoPrincipal is mcp-go's client.
type mcpgoPrincipal struct {
	c *mcpclient.Client

	mu             sync.Mutex
	logs, progress []string
}

func connectMCPGoPrincipal(t *testing.T, url, token string) *mcpgoPrincipal {
	t.Helper()
	tr, err := mcptransport.NewStreamableHTTP(url, mcptransport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + token}))
	if err != nil {
		t.Fatal(err)
	}
	p := &mcpgoPrincipal{c: mcpclient.NewClient(tr)}
	t.Cleanup(func() { p.c.Close() })
	p.c.OnNotification(func(n mcp.JSONRPCNotification) {
		p.mu.Lock()
		defer p.mu.Unlock()
		switch n.Method {
		case string(mcp.MethodNotificationMessage):
			p.logs = append(p.logs, fmt.Sprint(n.Params.AdditionalFields["data"]))
		case string(mcp.MethodNotificationProgress):
			p.progress = append(p.progress, fmt.Sprint(n.Params.AdditionalFields["message"]))
		}
	})
	if err := p.c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ClientInfo = mcp.Implementation{Name: "principal-test", Version: "1"}
	if _, err := p.c.Initialize(t.Context(), init); err != nil {
		t.Fatal(err)
	}
	return p
}

func (p *mcpgoPrincipal) work(ctx context.Context, who string) (string, error) {
	req := mcp.CallToolRequest{}
	req.Params.Name, req.Params.Arguments = "logs_work", map[string]any{"who": who}
	req.Params.Meta = &mcp.Meta{ProgressToken: "the-same-token", AdditionalFields: map[string]any{mcp.MetaKeyLogLevel: "debug"}}
	res, err := p.c.CallTool(ctx, req)
	if err != nil {
		return "", err
	}
	return allText(res), nil
}

func (p *mcpgoPrincipal) heard() (logs, progress []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.logs), slices.Clone(p.progress)
}

// Two principals (two bearer tokens) on the stateless protocol, each with
// a call in flight on one upstream that reports progress and logs for
// each: neither hears the other's, with the go-sdk's client and with
// mcp-go's. Both use the same progress token; each call's progress
// reaches its caller alone. The log messages name no call, so with both in
// flight the gateway keeps them to its own log; before, both calls had the
// same empty session id and the newest heard both.
func TestNoCrossPrincipalLogsWithoutASession(t *testing.T) {
	clients := map[string]func(t *testing.T, url, token, name string) principalClient{
		"go-sdk": func(t *testing.T, url, token, name string) principalClient {
			return sdkPrincipal{connectCrossEra(t, url, token, name, nil)}
		},
		"mcp-go": func(t *testing.T, url, token, _ string) principalClient { return connectMCPGoPrincipal(t, url, token) },
	}
	for kind, connect := range clients {
		t.Run(kind, func(t *testing.T) { testNoCrossPrincipal(t, connect) })
	}
}

func testNoCrossPrincipal(t *testing.T, connect func(t *testing.T, url, token, name string) principalClient) {
	arrived, release := newRendezvous(), make(chan struct{})
	dropped := &notRelayed{}
	hub := startHubWith(t, Options{Upstreams: []UpstreamConfig{loggingUpstream(t, arrived, release)},
		Builtin: fakeBuiltins, Logger: slog.New(dropped)})
	srv := NewServer(ServerOptions{Hub: hub})
	t.Cleanup(srv.Close)
	ts := httptest.NewServer(frontdoor.Guard(srv.HTTPHandler(), frontdoor.Options{BearerTokens: []string{"token-a", "token-b"}}))
	t.Cleanup(ts.Close)
	names := []string{"A", "B"}
	cs := []principalClient{connect(t, ts.URL+"/mcp", "token-a", "A"), connect(t, ts.URL+"/mcp", "token-b", "B")}

	var wg sync.WaitGroup
	results := make([]string, 2)
	for i, c := range cs {
		wg.Go(func() {
			text, err := c.work(t.Context(), names[i])
			if err != nil {
				text = "error: " + err.Error()
			}
			results[i] = text
		})
	}
	arrived.open(t)
	// Both calls stay in flight until each log message has been relayed
	// to someone or kept back.
	eventually(t, 10*time.Second, "both log messages to be relayed or kept back", func() bool {
		la, _ := cs[0].heard()
		lb, _ := cs[1].heard()
		return len(la)+len(lb)+dropped.count() >= 2
	})
	close(release)
	wg.Wait()
	for i, c := range cs {
		name := names[i]
		if want := "done for " + name; results[i] != want {
			t.Errorf("client %s's call: got %q, want %q", name, results[i], want)
		}
		logs, progress := c.heard()
		if other := slices.DeleteFunc(slices.Clone(logs), func(l string) bool { return l == "log for "+name }); len(other) > 0 {
			t.Errorf("client %s heard %q, another principal's log messages", name, other)
		}
		if want := []string{"progress for " + name}; !slices.Equal(progress, want) {
			t.Errorf("client %s got progress %q, want %q", name, progress, want)
		}
	}
}
