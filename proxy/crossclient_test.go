package proxy

//lint:file-ignore SA1019 these tests drive the sampling and roots features that clients of 2025-11-25 still use

// Nothing crosses between clients: what an upstream sends because of one
// client's call (sampling, elicitation and roots requests, log messages,
// progress) reaches that client only, and where the gateway cannot tell
// whose call it belongs to, it refuses rather than guess. Two go-sdk
// clients on separate bearer tokens and sessions, over streamable HTTP
// behind the Guard, both with calls in flight on the same upstream.

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-router/mcp-router/proxy/frontdoor"
)

// crossClient is one client of the gateway, recording every request and
// notification the gateway sends it.
type crossClient struct {
	name    string
	session *sdk.ClientSession

	mu                               sync.Mutex
	samples, elicits, logs, progress []string
}

func (c *crossClient) record(list *[]string, s string) {
	c.mu.Lock()
	*list = append(*list, s)
	c.mu.Unlock()
}

func (c *crossClient) seen() (samples, elicits, logs, progress []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.samples), slices.Clone(c.elicits), slices.Clone(c.logs), slices.Clone(c.progress)
}

// bearerTransport adds a bearer token to every request.
type bearerTransport struct{ token string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// connectCross connects a client named name with token to the gateway at
// url; it answers sampling with "model of NAME" and elicitation with
// {"answer": "answer of NAME"}, offers a root of its own, and asks for
// every log level.
func connectCross(t *testing.T, url, token, name string) *crossClient {
	t.Helper()
	return connectCrossEra(t, url, token, name, sessionEra)
}

// connectCrossEra is connectCross on the protocol era era (nil: the
// SDK's default, the stateless 2026-07-28, which has no logging level to
// set).
func connectCrossEra(t *testing.T, url, token, name string, era *sdk.ClientSessionOptions) *crossClient {
	t.Helper()
	c := &crossClient{name: name}
	cl := sdk.NewClient(&sdk.Implementation{Name: "client-" + name, Version: "1"}, &sdk.ClientOptions{
		CreateMessageHandler: func(_ context.Context, r *sdk.CreateMessageRequest) (*sdk.CreateMessageResult, error) {
			text := ""
			if len(r.Params.Messages) > 0 {
				if tc, ok := r.Params.Messages[0].Content.(*sdk.TextContent); ok {
					text = tc.Text
				}
			}
			c.record(&c.samples, text)
			return &sdk.CreateMessageResult{Role: "assistant", Model: "m", Content: &sdk.TextContent{Text: "model of " + name}}, nil
		},
		ElicitationHandler: func(_ context.Context, r *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			c.record(&c.elicits, r.Params.Message)
			return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"answer": "answer of " + name}}, nil
		},
		LoggingMessageHandler: func(_ context.Context, r *sdk.LoggingMessageRequest) {
			c.record(&c.logs, fmt.Sprint(r.Params.Data))
		},
		ProgressNotificationHandler: func(_ context.Context, r *sdk.ProgressNotificationClientRequest) {
			c.record(&c.progress, r.Params.Message)
		},
	})
	cl.AddRoots(&sdk.Root{URI: "file:///home/" + name, Name: name})
	tr := &sdk.StreamableClientTransport{Endpoint: url, MaxRetries: -1,
		HTTPClient: &http.Client{Transport: bearerTransport{token}}}
	s, err := cl.Connect(t.Context(), tr, era)
	if err != nil {
		t.Fatalf("connect %s: %v", name, err)
	}
	t.Cleanup(func() { s.Close() })
	c.session = s
	if era == nil {
		return c
	}
	if err := s.SetLoggingLevel(t.Context(), &sdk.SetLoggingLevelParams{Level: "debug"}); err != nil {
		t.Fatal(err)
	}
	return c
}

// twoClients serves a gateway on ups over streamable HTTP behind a Guard
// with two tokens, and connects clients A and B, one on each.
func twoClients(t *testing.T, ups ...UpstreamConfig) (a, b *crossClient) {
	t.Helper()
	srv := NewServer(ServerOptions{Hub: startHub(t, ups...)})
	t.Cleanup(srv.Close)
	ts := httptest.NewServer(frontdoor.Guard(srv.HTTPHandler(), frontdoor.Options{BearerTokens: []string{"token-a", "token-b"}}))
	t.Cleanup(ts.Close)
	return connectCross(t, ts.URL+"/mcp", "token-a", "A"), connectCross(t, ts.URL+"/mcp", "token-b", "B")
}

// call calls tool with a progress token both clients share.
func (c *crossClient) call(ctx context.Context, tool string, args map[string]any) (string, error) {
	p := &sdk.CallToolParams{Name: tool, Arguments: args}
	p.SetProgressToken("the-same-token")
	res, err := c.session.CallTool(ctx, p)
	if err != nil {
		return "", err
	}
	return resultText(res), nil
}

// rendezvous holds each work call until calls of both clients are in.
type rendezvous struct {
	arrived chan string
	release chan struct{}
}

func newRendezvous() *rendezvous {
	return &rendezvous{arrived: make(chan string, 2), release: make(chan struct{})}
}

func (r *rendezvous) wait(ctx context.Context, who string) {
	r.arrived <- who
	select {
	case <-r.release:
	case <-ctx.Done():
	}
}

// open releases the calls once two have arrived.
func (r *rendezvous) open(t *testing.T) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for range 2 {
		select {
		case <-r.arrived:
		case <-deadline:
			t.Fatal("the calls of both clients did not reach the upstream")
		}
	}
	close(r.release)
}

// sdkWorkUpstream is a go-sdk server over streamable HTTP whose work tool
// waits for the calls of both clients, then reports progress and asks its
// caller to sample, to elicit and for its roots, all on the call's own
// response stream, naming who called.
func sdkWorkUpstream(t *testing.T, name string, r *rendezvous) UpstreamConfig {
	t.Helper()
	srv := sdk.NewServer(&sdk.Implementation{Name: name, Version: "1"}, nil)
	type in struct {
		Who string `json:"who"`
	}
	sdk.AddTool(srv, &sdk.Tool{Name: "work", Description: "Ask the caller things"},
		func(ctx context.Context, req *sdk.CallToolRequest, args in) (*sdk.CallToolResult, any, error) {
			r.wait(ctx, args.Who)
			ss := req.Session
			if tok := req.Params.GetProgressToken(); tok != nil {
				_ = ss.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: tok, Progress: 1, Message: "progress for " + args.Who})
			}
			sampled := "refused"
			if res, err := ss.CreateMessage(ctx, &sdk.CreateMessageParams{MaxTokens: 10,
				Messages: []*sdk.SamplingMessage{{Role: "user", Content: &sdk.TextContent{Text: "sample for " + args.Who}}}}); err == nil {
				if tc, ok := res.Content.(*sdk.TextContent); ok {
					sampled = tc.Text
				}
			}
			elicited := "refused"
			if res, err := ss.Elicit(ctx, &sdk.ElicitParams{Message: "elicit for " + args.Who,
				RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"answer": map[string]any{"type": "string"}}}}); err == nil {
				elicited = fmt.Sprint(res.Content["answer"])
			}
			roots := "refused"
			if res, err := ss.ListRoots(ctx, nil); err == nil {
				var uris []string
				for _, root := range res.Roots {
					uris = append(uris, root.URI)
				}
				roots = strings.Join(uris, ",")
			}
			text := fmt.Sprintf("sampled=%s elicited=%s roots=%s", sampled, elicited, roots)
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: text}}}, nil, nil
		})
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return UpstreamConfig{Name: name, Transport: TransportStreamableHTTP, URL: ts.URL, Prefix: name + "_"}
}

// An upstream that sends its requests on the response stream of the call
// they belong to: each client is asked only its own questions, and each
// call gets only its own client's answers; roots are never passed on.
func TestNoCrossClientRequestsOnTheCallsStream(t *testing.T) {
	r := newRendezvous()
	a, b := twoClients(t, sdkWorkUpstream(t, "up", r))
	results := map[string]string{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, c := range []*crossClient{a, b} {
		wg.Go(func() {
			text, err := c.call(t.Context(), "up_work", map[string]any{"who": c.name})
			if err != nil {
				text = "error: " + err.Error()
			}
			mu.Lock()
			results[c.name] = text
			mu.Unlock()
		})
	}
	r.open(t)
	wg.Wait()
	for _, c := range []*crossClient{a, b} {
		want := fmt.Sprintf("sampled=model of %s elicited=answer of %s roots=refused", c.name, c.name)
		if got := results[c.name]; got != want {
			t.Errorf("client %s's call: got %q, want %q", c.name, got, want)
		}
		samples, elicits, logs, progress := c.seen()
		if want := []string{"sample for " + c.name}; !slices.Equal(samples, want) {
			t.Errorf("client %s was asked to sample %q, want %q", c.name, samples, want)
		}
		if want := []string{"up asks: elicit for " + c.name}; !slices.Equal(elicits, want) { // named, so no upstream poses as the gateway
			t.Errorf("client %s was asked to elicit %q, want %q", c.name, elicits, want)
		}
		if want := []string{"progress for " + c.name}; !slices.Equal(progress, want) {
			t.Errorf("client %s got progress %q, want %q (both used the same token)", c.name, progress, want)
		}
		if len(logs) > 0 {
			t.Errorf("client %s got logs %q, want none", c.name, logs)
		}
	}
}

// An upstream that says nothing of which call its requests and logs
// belong to (a stdio server shared by both clients): with calls of both
// in flight, its sampling request is refused and its logs reach neither;
// with one client's calls alone, they reach that client.
func TestNoCrossClientRefusesWhenTheCallerIsUnknown(t *testing.T) {
	a, b := twoClients(t, stdioFake("st"))
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	hung := make(chan error, 1)
	go func() { _, err := b.call(ctx, "st_hang", nil); hung <- err }()
	eventually(t, 10*time.Second, "B's call to reach the upstream (its first progress)", func() bool {
		_, _, _, progress := b.seen()
		return len(progress) > 0
	})
	got, err := a.call(t.Context(), "st_sample", map[string]any{"prompt": "for A"})
	if err != nil || !strings.Contains(got, "several clients") {
		t.Errorf("A's sample with B's call in flight: got %q, %v, want the request refused as ambiguous", got, err)
	}
	if _, err := a.call(t.Context(), "st_log", nil); err != nil {
		t.Fatal(err)
	}
	for _, c := range []*crossClient{a, b} {
		samples, _, logs, _ := c.seen()
		if len(samples) > 0 || len(logs) > 0 {
			t.Errorf("client %s got sampling %q and logs %q, want none while both have calls in flight", c.name, samples, logs)
		}
	}
	cancel()
	<-hung
	// B's call ends at the gateway a moment after B stops waiting for it.
	var got2 string
	eventually(t, 10*time.Second, "A's sample, alone, to be answered by A's model", func() bool {
		got2, err = a.call(t.Context(), "st_sample", map[string]any{"prompt": "for A"})
		return err == nil && got2 == "sampled: model of A"
	})
	if _, err := a.call(t.Context(), "st_log", nil); err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, "the upstream's logs at A", func() bool {
		_, _, logs, _ := a.seen()
		return len(logs) >= 3
	})
	if samples, _, logs, _ := b.seen(); len(samples) > 0 || len(logs) > 0 {
		t.Errorf("client B got sampling %q and logs %q from A's calls", samples, logs)
	}
}
