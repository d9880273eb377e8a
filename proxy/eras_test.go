package proxy

import (
	"encoding/json"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	mcpclient "github.com/mark3labs/mcp-go/client"
	mcptransport "github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-router/mcp-router/proxy/frontdoor"
	"github.com/mcp-router/mcp-router/routing"
)

// eraClient is mcp-go's client on one protocol era, over one transport.
type eraClient struct {
	*mcpclient.Client
	changed chan struct{}
}

// connectEra connects mcp-go's client to a routed proxy over transport
// ("http" or "stdio"), pinned to version (empty: the newest, 2026-07-28).
func connectEra(t *testing.T, srv *Server, transport, version string) *eraClient {
	t.Helper()
	var opts []mcpclient.ClientOption
	if version != "" {
		opts = append(opts, mcpclient.WithProtocolVersion(version))
	}
	var c *mcpclient.Client
	switch transport {
	case "stdio":
		fromProxy, toProxy := stdioPipes(t, srv)
		c = mcpclient.NewClient(mcptransport.NewIO(fromProxy, toProxy, nil), opts...)
	default:
		ts := httptest.NewServer(srv.HTTPHandler())
		t.Cleanup(ts.Close)
		var trOpts []mcptransport.StreamableHTTPCOption
		if version != "" && version < "2026" {
			// A session client keeps the standalone GET stream open, as
			// real ones do: a list_changed queued while a POST's answer is
			// being finished then arrives at once, not with the next POST.
			//lint:ignore SA1019 the GET stream is how a 2025-11-25 server sends notifications between requests
			trOpts = append(trOpts, mcptransport.WithContinuousListening())
		}
		tr, err := mcptransport.NewStreamableHTTP(ts.URL+"/mcp", trOpts...)
		if err != nil {
			t.Fatal(err)
		}
		c = mcpclient.NewClient(tr, opts...)
	}
	t.Cleanup(func() { c.Close() })
	ec := &eraClient{Client: c, changed: make(chan struct{}, 16)}
	c.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method == string(mcp.MethodNotificationToolsListChanged) {
			select {
			case ec.changed <- struct{}{}:
			default:
			}
		}
	})
	if err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ClientInfo = mcp.Implementation{Name: "era-test", Version: "1"}
	res, err := c.Initialize(t.Context(), init)
	if err != nil {
		t.Fatalf("initialize (%s, %q): %v", transport, version, err)
	}
	if !strings.Contains(res.Instructions, "gateway to ") { // from server/discover on 2026-07-28
		t.Errorf("instructions (%s, %q): %q, want the ones generated from the catalog", transport, version, res.Instructions)
	}
	return ec
}

func (c *eraClient) names(t *testing.T) ([]string, *mcp.ListToolsResult) {
	t.Helper()
	res, err := c.ListTools(t.Context(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	return names, res
}

func (c *eraClient) call(t *testing.T, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	req := mcp.CallToolRequest{}
	req.Params.Name, req.Params.Arguments = name, args
	res, err := c.CallTool(t.Context(), req)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

func allText(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		parts = append(parts, mcp.GetTextFromContent(c))
	}
	return strings.Join(parts, "\n")
}

// handleOf is the handle a result gave, from its _meta.
func handleOf(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	if res.Meta == nil {
		t.Fatalf("result without _meta, want a handle: %s", allText(res))
	}
	h, _ := res.Meta.AdditionalFields[HandleMetaKey].(string)
	if h == "" || !strings.Contains(allText(res), "handle: "+h) {
		t.Fatalf("result handle %q, text %q: want the handle in _meta and in the text", h, allText(res))
	}
	return h
}

func erasServer(t *testing.T) *Server {
	t.Helper()
	h := startHub(t, builtinFake("alpha"), builtinFake("beta"))
	srv := NewServer(ServerOptions{Hub: h, Router: routing.NewRouter(routing.RouterOptions{}), CoreTools: []string{"alpha_pid"},
		Session: routing.SessionOptions{MaxDiscoveries: 2, ResetAfter: time.Hour}})
	t.Cleanup(srv.Close)
	return srv
}

var beltOfProfile = []string{"alpha_pid", "call_tool", "describe_tools", "read_result", "request_more_tools", "run_plan"}

// A 2026-07-28 client finds, describes and calls a routed tool over HTTP
// and over stdio: its tools/list is the profile's (own and core tools),
// the same before and after a discovery, in name order, with ttlMs and
// cacheScope; request_more_tools returns the tools and a handle; the tool
// is called through call_tool.
func TestStatelessClientFindsDescribesAndCalls(t *testing.T) {
	for _, transport := range []string{"http", "stdio"} {
		t.Run(transport, func(t *testing.T) {
			c := connectEra(t, erasServer(t), transport, "")
			if v := c.ProtocolVersion(); v != mcp.ProtocolVersion20260728 {
				t.Fatalf("negotiated %q, want %s", v, mcp.ProtocolVersion20260728)
			}
			before, res := c.names(t)
			if !slices.Equal(before, beltOfProfile) {
				t.Errorf("tools/list %v, want the profile's %v in name order", before, beltOfProfile)
			}
			if ttl, ok := res.TTL(); !ok || ttl < 0 || res.CacheScope != mcp.CacheScopePrivate {
				t.Errorf("tools/list ttlMs %d (%v), cacheScope %q: want both, private", ttl, ok, res.CacheScope)
			}
			found := c.call(t, "request_more_tools", map[string]any{"query": "echo the text back", "tools": []any{"beta_echo"}})
			if found.IsError || !strings.Contains(allText(found), "beta_echo(text: string)") {
				t.Fatalf("request_more_tools: %s", allText(found))
			}
			handle := handleOf(t, found)
			if sc, _ := found.StructuredContent.(map[string]any); sc["handle"] != handle {
				t.Errorf("structuredContent handle %v, want %q", sc["handle"], handle)
			}
			if after, _ := c.names(t); !slices.Equal(after, before) {
				t.Errorf("tools/list after a discovery %v, want it unchanged %v", after, before)
			}
			described := c.call(t, "describe_tools", map[string]any{"tools": []any{"beta_echo"}})
			if !strings.Contains(allText(described), `"required":["text"]`) {
				t.Errorf("describe_tools: %s", allText(described))
			}
			called := c.call(t, "call_tool", map[string]any{"name": "beta_echo", "arguments": map[string]any{"text": "stateless"}, "handle": handle})
			if called.IsError || mcp.GetTextFromContent(called.Content[0]) != "stateless" {
				t.Fatalf("call_tool beta_echo: %s", allText(called))
			}
			handleOf(t, called)
			select {
			case <-c.changed:
				t.Error("a stateless client got tools/list_changed for its own discovery")
			default:
			}
		})
	}
}

// A 2025-11-25 client on the same server keeps its session: the belt
// grows with a discovery and list_changed says so; no handle is minted.
func TestSessionClientKeepsItsBelt(t *testing.T) {
	for _, transport := range []string{"http", "stdio"} {
		t.Run(transport, func(t *testing.T) {
			c := connectEra(t, erasServer(t), transport, "2025-11-25")
			if v := c.ProtocolVersion(); v != "2025-11-25" {
				t.Fatalf("negotiated %q, want 2025-11-25", v)
			}
			found := c.call(t, "request_more_tools", map[string]any{"query": "echo the text back", "tools": []any{"beta_echo"}})
			if found.Meta != nil && found.Meta.AdditionalFields[HandleMetaKey] != nil {
				t.Errorf("a session client got a handle: %s", allText(found))
			}
			select {
			case <-c.changed:
			case <-time.After(faultWait):
				t.Fatal("no tools/list_changed after the belt grew")
			}
			if names, _ := c.names(t); !slices.Contains(names, "beta_echo") {
				t.Errorf("belt after discovery %v, want beta_echo on it", names)
			}
			if got := mcp.GetTextFromContent(c.call(t, "beta_echo", map[string]any{"text": "session"}).Content[0]); got != "session" {
				t.Errorf("beta_echo: %q", got)
			}
		})
	}
}

// The breaker of a stateless client lives in its handle: two discoveries
// chained through handles open it (the third is refused), a fresh start
// without a handle is not affected, and a successful call through
// call_tool with the handle closes it.
func TestStatelessBreakerTravelsInTheHandle(t *testing.T) {
	for _, transport := range []string{"http", "stdio"} {
		t.Run(transport, func(t *testing.T) {
			c := connectEra(t, erasServer(t), transport, "")
			search := func(handle string) *mcp.CallToolResult {
				args := map[string]any{"query": "echo the text back"}
				if handle != "" {
					args["handle"] = handle
				}
				return c.call(t, "request_more_tools", args)
			}
			h := handleOf(t, search(""))
			h = handleOf(t, search(h))
			refused := search(h)
			if !refused.IsError || !strings.Contains(allText(refused), "paused") {
				t.Fatalf("third chained discovery with max 2: %s, want the breaker's refusal", allText(refused))
			}
			if fresh := search(""); fresh.IsError {
				t.Errorf("a discovery without a handle was refused: another conversation's breaker leaked: %s", allText(fresh))
			}
			called := c.call(t, "call_tool", map[string]any{"name": "alpha_echo", "arguments": map[string]any{"text": "ok"}, "handle": handleOf(t, refused)})
			if called.IsError {
				t.Fatalf("call_tool: %s", allText(called))
			}
			if again := search(handleOf(t, called)); again.IsError {
				t.Errorf("discovery after a successful call: %s, want the breaker closed", allText(again))
			}
			forged := search("not-a-handle")
			if forged.IsError || !strings.Contains(allText(forged), "handle passed was ignored") {
				t.Errorf("a forged handle: %s, want a fresh start and a note", allText(forged))
			}
		})
	}
}

// A 2026-07-28 client that listens (subscriptions/listen) hears
// tools/list_changed when the catalog changes, over HTTP and stdio; its
// tools/list stays the profile's.
func TestStatelessClientHearsCatalogChangesOnListen(t *testing.T) {
	for _, transport := range []string{"http", "stdio"} {
		t.Run(transport, func(t *testing.T) {
			srv := erasServer(t)
			c := connectEra(t, srv, transport, "")
			stop, err := c.ListenAsync(t.Context(), mcp.SubscriptionFilter{ToolsListChanged: true}, func(err error) { t.Errorf("listen: %v", err) })
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(stop)
			n := 0
			eventually(t, faultWait, "tools/list_changed on the listen stream", func() bool {
				n++ // a new upstream tool each round, until the stream is open to hear one
				c.call(t, "call_tool", map[string]any{"name": "alpha_add_tool", "arguments": map[string]any{"name": "extra" + strconv.Itoa(n)}})
				select {
				case <-c.changed:
					return true
				case <-time.After(50 * time.Millisecond):
					return false
				}
			})
			if names, _ := c.names(t); !slices.Equal(names, beltOfProfile) {
				t.Errorf("tools/list after the catalog changed %v, want the profile's %v", names, beltOfProfile)
			}
		})
	}
}

// A stateless client's detour is learned through its handles: two
// searches chained by the handle, then a successful call_tool of a tool
// the second gave, with the handle, teach the first query that tool, for
// every client after.
func TestStatelessDetourIsLearnedThroughTheHandle(t *testing.T) {
	mem := fileLessons(t)
	h := startHub(t, builtinFake("alpha"), builtinFake("beta"))
	fuse := routing.DefaultFusePolicy()
	fuse.CollapseDuplicates = false
	srv := NewServer(ServerOptions{Hub: h, Router: routing.NewRouter(routing.RouterOptions{Lessons: mem, Fuse: &fuse}), Lessons: mem})
	t.Cleanup(srv.Close)
	c := connectEra(t, srv, "http", "")
	first := c.call(t, "request_more_tools", map[string]any{"query": "report how far along the job is"})
	second := c.call(t, "request_more_tools", map[string]any{"query": "report the progress", "handle": handleOf(t, first)})
	if !strings.Contains(allText(second), "beta_progress(") {
		t.Fatalf("the second search did not give beta_progress: %s", allText(second))
	}
	called := c.call(t, "call_tool", map[string]any{"name": "beta_progress", "arguments": map[string]any{"steps": 1}, "handle": handleOf(t, second)})
	if called.IsError {
		t.Fatal(allText(called))
	}
	mem.Close() // the lesson is learned off the call's path
	again := c.call(t, "request_more_tools", map[string]any{"query": "report how far along the job is"})
	var d struct{ Tools []routedTool }
	b, _ := json.Marshal(again.StructuredContent)
	if err := json.Unmarshal(b, &d); err != nil || len(d.Tools) == 0 || d.Tools[0].Name != "beta_progress" {
		t.Errorf("after the detour, a fresh search ranks %s first, want beta_progress", b)
	}
}

// Behind Guard, a client's 2026-07-28 requests in flight count as its
// sessions: with a bound of 1, a listen stream held open leaves no room
// for another request of that client (429).
func TestStatelessRequestsInFlightAreBounded(t *testing.T) {
	srv := erasServer(t)
	ts := httptest.NewServer(frontdoor.Guard(srv.HTTPHandler(), frontdoor.Options{MaxSessionsPerClient: 1}))
	t.Cleanup(ts.Close)
	tr, err := mcptransport.NewStreamableHTTP(ts.URL + "/mcp")
	if err != nil {
		t.Fatal(err)
	}
	c := mcpclient.NewClient(tr)
	t.Cleanup(func() { c.Close() })
	if err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Initialize(t.Context(), mcp.InitializeRequest{}); err != nil {
		t.Fatal(err)
	}
	listenErr := make(chan error, 16)
	listen := func() func() {
		stop, err := c.ListenAsync(t.Context(), mcp.SubscriptionFilter{ToolsListChanged: true}, func(err error) { listenErr <- err })
		if err != nil {
			t.Fatal(err)
		}
		return stop
	}
	stop := listen()
	var last error
	eventually(t, faultWait, "a request refused while the listen stream is open", func() bool {
		select {
		case <-listenErr: // the listen itself met the bound (a list was in flight): open it again
			stop()
			stop = listen()
			return false
		default:
		}
		_, last = c.ListTools(t.Context(), mcp.ListToolsRequest{})
		return last != nil
	})
	if !strings.Contains(last.Error(), "429") && !strings.Contains(last.Error(), "sessions open") {
		t.Errorf("refusal: %v, want 429 naming the bound", last)
	}
	stop()
	eventually(t, faultWait, "requests served again once the stream closed", func() bool {
		_, err := c.ListTools(t.Context(), mcp.ListToolsRequest{})
		return err == nil
	})
}
