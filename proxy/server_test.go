package proxy

//lint:file-ignore SA1019 these tests drive the sampling and logging features that clients of 2025-11-25 still use

import (
	"context"
	"encoding/json"
	"io"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	mcpclient "github.com/mark3labs/mcp-go/client"
	mcptransport "github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// sdkClient connects the official Go SDK client to the proxy, as an
// independent implementation of the protocol would.
type sdkClient struct {
	session  *sdk.ClientSession
	mu       sync.Mutex
	progress []*sdk.ProgressNotificationParams
	logs     []*sdk.LoggingMessageParams
	changed  chan struct{}
}

func newSDKClient() (*sdk.Client, *sdkClient) {
	c := &sdkClient{changed: make(chan struct{}, 16)}
	cl := sdk.NewClient(&sdk.Implementation{Name: "go-sdk-test", Version: "1"}, &sdk.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *sdk.ProgressNotificationClientRequest) {
			c.mu.Lock()
			c.progress = append(c.progress, r.Params)
			c.mu.Unlock()
		},
		CreateMessageHandler: func(_ context.Context, r *sdk.CreateMessageRequest) (*sdk.CreateMessageResult, error) {
			return &sdk.CreateMessageResult{Role: "assistant", Model: "test-model", Content: &sdk.TextContent{Text: "from the client's model"}}, nil
		},
		LoggingMessageHandler: func(_ context.Context, r *sdk.LoggingMessageRequest) {
			c.mu.Lock()
			c.logs = append(c.logs, r.Params)
			c.mu.Unlock()
		},
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) {
			select {
			case c.changed <- struct{}{}:
			default:
			}
		},
	})
	return cl, c
}

// sessionEra pins the official Go SDK client to the protocol with sessions
// (2025-11-25), which the tests of per-session behaviour (belts,
// list_changed, progress, sampling) are about; eras_test.go covers the
// stateless protocol.
var sessionEra = &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"}

// overHTTP serves the proxy on an httptest server and connects a client.
func overHTTP(t *testing.T, h *Hub) *sdkClient {
	t.Helper()
	return overHTTPWith(t, ServerOptions{Hub: h})
}

func overHTTPWith(t *testing.T, opts ServerOptions) *sdkClient {
	t.Helper()
	srv := NewServer(opts)
	t.Cleanup(srv.Close)
	ts := httptest.NewServer(srv.HTTPHandler())
	t.Cleanup(ts.Close)
	return sdkOverHTTP(t, ts.URL)
}

// sdkOverHTTP connects a new client session to a proxy served at url.
func sdkOverHTTP(t *testing.T, url string) *sdkClient {
	t.Helper()
	cl, c := newSDKClient()
	s, err := cl.Connect(t.Context(), &sdk.StreamableClientTransport{Endpoint: url + "/mcp", MaxRetries: -1}, sessionEra)
	if err != nil {
		t.Fatalf("connect over HTTP: %v", err)
	}
	c.session = s
	t.Cleanup(func() { s.Close() })
	return c
}

// overStdio serves the proxy over a pair of pipes, as over a process's
// stdin and stdout, and connects a client.
func overStdio(t *testing.T, h *Hub) *sdkClient {
	t.Helper()
	return overStdioWith(t, ServerOptions{Hub: h})
}

func overStdioWith(t *testing.T, opts ServerOptions) *sdkClient {
	t.Helper()
	srv := NewServer(opts)
	t.Cleanup(srv.Close)
	fromProxy, toProxy := stdioPipes(t, srv)
	cl, c := newSDKClient()
	s, err := cl.Connect(t.Context(), &sdk.IOTransport{Reader: fromProxy, Writer: toProxy}, sessionEra)
	if err != nil {
		t.Fatalf("connect over stdio: %v", err)
	}
	c.session = s
	t.Cleanup(func() { s.Close() })
	return c
}

// stdioPipes serves srv over a pair of pipes, as over a process's stdin
// and stdout, until the test's cleanups run (a client's cleanup,
// registered later, runs first), and returns the client's ends. The
// cleanup closes the client's reading end too, as a client process that
// exits does: a notification the gateway writes after the client stopped
// reading (a catalog change, say) then fails instead of blocking on the
// pipe forever.
func stdioPipes(t *testing.T, srv *Server) (fromProxy io.ReadCloser, toProxy io.WriteCloser) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.WithoutCancel(t.Context()))
	done := make(chan struct{})
	go func() {
		defer close(done)
		srv.ServeStdio(ctx, inR, outW)
		outW.Close()
	}()
	t.Cleanup(func() {
		cancel()
		inR.Close()
		outR.Close()
		<-done
	})
	return outR, inW
}

var transports = []struct {
	name    string
	connect func(*testing.T, *Hub) *sdkClient
}{{"http", overHTTP}, {"stdio", overStdio}}

func (c *sdkClient) call(t *testing.T, name string, args map[string]any) *sdk.CallToolResult {
	t.Helper()
	res, err := c.session.CallTool(t.Context(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("CallTool(%s): %v", name, err)
	}
	return res
}

func resultText(r *sdk.CallToolResult) string {
	var parts []string
	for _, c := range r.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func TestServerListsCatalogAndOwnTools(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			c := tr.connect(t, startHub(t, builtinFake("alpha")))
			res, err := c.session.ListTools(t.Context(), nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tool := range res.Tools {
				names = append(names, tool.Name)
			}
			for _, want := range []string{"call_tool", "alpha_echo", "alpha_sleep"} {
				if !slices.Contains(names, want) {
					t.Errorf("tools/list lacks %s: got %v", want, names)
				}
			}
			if got := c.session.InitializeResult().Capabilities.Tools; got == nil || !got.ListChanged {
				t.Errorf("tools capability: got %+v, want listChanged", got)
			}
			if c.session.InitializeResult().Instructions == "" {
				t.Error("no server instructions")
			}
		})
	}
}

func TestServerCallsDirectlyAndThroughCallTool(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			c := tr.connect(t, startHub(t, builtinFake("alpha")))
			if got := resultText(c.call(t, "alpha_echo", map[string]any{"text": "direct"})); got != "direct" {
				t.Errorf("direct: got %q", got)
			}
			res := c.call(t, "call_tool", map[string]any{"name": "alpha_echo", "arguments": map[string]any{"text": "through"}})
			if res.IsError || resultText(res) != "through" {
				t.Errorf("call_tool: got %q (isError %v)", resultText(res), res.IsError)
			}
			sc, _ := json.Marshal(res.StructuredContent)
			if !strings.Contains(string(sc), `"server":"alpha"`) {
				t.Errorf("structuredContent not passed through: %s", sc)
			}
		})
	}
}

func TestServerCallToolErrorsAreReadable(t *testing.T) {
	c := overHTTP(t, startHub(t, builtinFake("alpha")))
	cases := []struct {
		name string
		args map[string]any
		want string
	}{
		{"unknown tool", map[string]any{"name": "alpha_nope"}, "alpha_nope: unknown tool"},
		{"missing name", map[string]any{}, `needs "name"`},
		{"own tool", map[string]any{"name": "call_tool"}, "own tool"},
		{"bad arguments", map[string]any{"name": "alpha_echo", "arguments": "x"}, "must be an object"},
		{"tool failure", map[string]any{"name": "alpha_fail"}, "always fails"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := c.call(t, "call_tool", tc.args)
			if !res.IsError || !strings.Contains(resultText(res), tc.want) {
				t.Errorf("got %q (isError %v), want an error containing %q", resultText(res), res.IsError, tc.want)
			}
		})
	}
}

func TestServerUpstreamFailureNamesToolAndUpstream(t *testing.T) {
	up := stdioFake("alpha")
	up.Timeout = 100 * time.Millisecond
	c := overHTTP(t, startHub(t, up))
	res := c.call(t, "alpha_hang", nil)
	text := resultText(res)
	if !res.IsError || !strings.Contains(text, "alpha_hang") || !strings.Contains(text, "upstream_timeout") {
		t.Errorf("got %q (isError %v), want a timeout naming the tool", text, res.IsError)
	}
	sc, _ := json.Marshal(res.StructuredContent)
	if !strings.Contains(string(sc), `"upstream":"alpha"`) || !strings.Contains(string(sc), `"kind":"upstream_timeout"`) {
		t.Errorf("structuredContent: got %s", sc)
	}
}

func TestServerRelaysProgressWithClientToken(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			c := tr.connect(t, startHub(t, stdioFake("alpha")))
			params := &sdk.CallToolParams{Name: "alpha_progress", Arguments: map[string]any{"steps": 3}}
			params.SetProgressToken("client-token-7")
			if _, err := c.session.CallTool(t.Context(), params); err != nil {
				t.Fatal(err)
			}
			eventually(t, 2*time.Second, "3 progress notifications", func() bool {
				c.mu.Lock()
				defer c.mu.Unlock()
				return len(c.progress) == 3
			})
			c.mu.Lock()
			defer c.mu.Unlock()
			// The proxy sends 1, 2, 3 in order (a stale value would be
			// dropped); the SDK client may hand them to its handler in
			// any order, so compare them sorted.
			var got []float64
			for _, p := range c.progress {
				if p.ProgressToken != "client-token-7" {
					t.Errorf("progress with token %v, want the client's own", p.ProgressToken)
				}
				got = append(got, p.Progress)
			}
			slices.Sort(got)
			if !slices.Equal(got, []float64{1, 2, 3}) {
				t.Errorf("progress values %v, want 1, 2, 3", got)
			}
		})
	}
}

func TestServerSendsListChangedWhenUpstreamChanges(t *testing.T) {
	c := overHTTP(t, startHub(t, stdioFake("alpha")))
	c.call(t, "alpha_add_tool", map[string]any{"name": "fresh"})
	select {
	case <-c.changed:
	case <-time.After(5 * time.Second):
		t.Fatal("no notifications/tools/list_changed")
	}
	res, err := c.session.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(res.Tools, func(tool *sdk.Tool) bool { return tool.Name == "alpha_fresh" }) {
		t.Error("tools/list after list_changed lacks alpha_fresh")
	}
}

func TestServerPassesPromptsAndResources(t *testing.T) {
	c := overHTTP(t, startHub(t, builtinFake("alpha")))
	p, err := c.session.GetPrompt(t.Context(), &sdk.GetPromptParams{Name: "alpha_greet", Arguments: map[string]string{"who": "Lin"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Messages[0].Content.(*sdk.TextContent).Text; got != "Hello, Lin, from alpha" {
		t.Errorf("prompt: got %q", got)
	}
	r, err := c.session.ReadResource(t.Context(), &sdk.ReadResourceParams{URI: "fake://alpha/readme"})
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Contents[0].Text; got != "readme of alpha" {
		t.Errorf("resource: got %q", got)
	}
}

func TestServerKeepsUpstreamSchema(t *testing.T) {
	c := overHTTP(t, startHub(t, builtinFake("alpha")))
	res, err := c.session.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(res.Tools, func(tool *sdk.Tool) bool { return tool.Name == "alpha_echo" })
	schema, _ := json.Marshal(res.Tools[i].InputSchema)
	if !strings.Contains(string(schema), `"required":["text"]`) || !strings.Contains(string(schema), `"text":{"type":"string"}`) {
		t.Errorf("alpha_echo schema: got %s", schema)
	}
}

func TestServerRelaysSamplingAndLogsToTheCaller(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			c := tr.connect(t, startHub(t, stdioFake("alpha")))
			if got := resultText(c.call(t, "alpha_sample", map[string]any{"prompt": "hi"})); got != "sampled: from the client's model" {
				t.Errorf("sampling through the proxy: got %q", got)
			}
			if err := c.session.SetLoggingLevel(t.Context(), &sdk.SetLoggingLevelParams{Level: "warning"}); err != nil {
				t.Fatal(err)
			}
			c.call(t, "alpha_log", nil)
			eventually(t, 5*time.Second, "the upstream's warning and error logs", func() bool {
				c.mu.Lock()
				defer c.mu.Unlock()
				return len(c.logs) >= 2
			})
			c.mu.Lock()
			defer c.mu.Unlock()
			for _, l := range c.logs {
				if l.Level == "info" {
					t.Errorf("an info log passed a warning level: %+v", l)
				}
			}
		})
	}
}

// FI-17: a progress flood is thinned out (a burst passes, then a steady
// rate); values keep rising and the latest is sent before the result.
// (An upstream's own stdio server drops a flood before it reaches us, so
// the relay is driven directly.)
func TestFI17ProgressFloodIsRateLimited(t *testing.T) {
	var got []float64
	r := newProgressRelay(t.Context(), "flood", func(p map[string]any) { got = append(got, p["progress"].(float64)) })
	start := time.Now()
	for i := 1; i <= 5000; i++ {
		r.send(Progress{Progress: float64(i)})
	}
	allowed := progressBurst + int(time.Since(start).Seconds()*progressRate) + 2
	r.send(Progress{Progress: 3}) // stale: dropped
	r.settle()
	if len(got) > allowed {
		t.Errorf("5000 notifications in a burst went out as %d, want at most %d", len(got), allowed)
	}
	if !slices.IsSorted(got) || got[len(got)-1] != 5000 {
		t.Errorf("sent %v..., want rising values ending with the latest", got[:min(5, len(got))])
	}
	few := newProgressRelay(t.Context(), "few", func(p map[string]any) { got = append(got, p["progress"].(float64)) })
	got = nil
	for i := 1; i <= 3; i++ {
		few.send(Progress{Progress: float64(i), Total: 3})
	}
	if !slices.Equal(got, []float64{1, 2, 3}) {
		t.Errorf("a few notifications: sent %v, want all three", got)
	}
}

// An mcp-go client left to its defaults probes with server/discover
// (2026-07-28) first; the proxy serves that protocol, so the client stays
// on it and its calls are served, over stdio and HTTP.
func TestMCPGoClientNegotiatesTheStatelessProtocol(t *testing.T) {
	h := startHub(t, builtinFake("alpha"))
	srv := NewServer(ServerOptions{Hub: h})
	t.Cleanup(srv.Close)
	check := func(t *testing.T, c *mcpclient.Client) {
		t.Helper()
		res, err := c.Initialize(t.Context(), mcp.InitializeRequest{})
		if err != nil {
			t.Fatalf("initialize: %v", err)
		}
		if res.ProtocolVersion != mcp.ProtocolVersion20260728 {
			t.Errorf("negotiated %q, want %s", res.ProtocolVersion, mcp.ProtocolVersion20260728)
		}
		req := mcp.CallToolRequest{}
		req.Params.Name, req.Params.Arguments = "alpha_echo", map[string]any{"text": "hi"}
		got, err := c.CallTool(t.Context(), req)
		if err != nil || got.IsError || mcp.GetTextFromContent(got.Content[0]) != "hi" {
			t.Fatalf("call: %v, %v", got, err)
		}
	}
	t.Run("stdio", func(t *testing.T) {
		fromProxy, toProxy := stdioPipes(t, srv)
		c := mcpclient.NewClient(mcptransport.NewIO(fromProxy, toProxy, nil))
		t.Cleanup(func() { c.Close() })
		if err := c.Start(t.Context()); err != nil {
			t.Fatal(err)
		}
		check(t, c)
	})
	t.Run("http", func(t *testing.T) {
		ts := httptest.NewServer(srv.HTTPHandler())
		t.Cleanup(ts.Close)
		c, err := mcpclient.NewStreamableHttpClient(ts.URL + "/mcp")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		if err := c.Start(t.Context()); err != nil {
			t.Fatal(err)
		}
		check(t, c)
	})
}
