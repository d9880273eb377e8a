package proxy

import (
	"context"
	"fmt"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-router/mcp-router/routing"
)

// listCounts counts the list_changed notifications a client hears.
type listCounts struct {
	mu                   sync.Mutex
	tools, prompts, rsrc int
	toolsHeard           chan struct{}
}

func (l *listCounts) get() (tools, prompts, rsrc int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.tools, l.prompts, l.rsrc
}

// countingClient connects a go-sdk client over transport ("stdio" or
// "http") to a server of opts and counts the list_changed notifications it
// hears.
func countingClient(t *testing.T, transport string, opts ServerOptions) (*sdk.ClientSession, *listCounts) {
	t.Helper()
	srv := NewServer(opts)
	t.Cleanup(srv.Close)
	l := &listCounts{toolsHeard: make(chan struct{}, 64)}
	bump := func(n *int) { l.mu.Lock(); *n++; l.mu.Unlock() }
	cl := sdk.NewClient(&sdk.Implementation{Name: "counting", Version: "1"}, &sdk.ClientOptions{
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) {
			bump(&l.tools)
			l.toolsHeard <- struct{}{}
		},
		PromptListChangedHandler:   func(context.Context, *sdk.PromptListChangedRequest) { bump(&l.prompts) },
		ResourceListChangedHandler: func(context.Context, *sdk.ResourceListChangedRequest) { bump(&l.rsrc) },
	})
	var tr sdk.Transport
	if transport == "http" {
		ts := httptest.NewServer(srv.HTTPHandler())
		t.Cleanup(ts.Close)
		tr = &sdk.StreamableClientTransport{Endpoint: ts.URL + "/mcp", MaxRetries: -1}
	} else {
		fromProxy, toProxy := stdioPipes(t, srv)
		tr = &sdk.IOTransport{Reader: fromProxy, Writer: toProxy}
	}
	s, err := cl.Connect(t.Context(), tr, sessionEra)
	if err != nil {
		t.Fatalf("connect over %s: %v", transport, err)
	}
	t.Cleanup(func() { s.Close() })
	return s, l
}

// Eight upstreams joining together behind a belt change the catalog, but
// the tools a client sees, over stdio or HTTP, only once: when the one
// whose tool is a core tool joins. The client hears one tools/list_changed
// for that, and nothing for the other seven.
func TestQuietJoinsSendNoListChangedBehindABelt(t *testing.T) {
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			names := make([]string, 8)
			ups := []UpstreamConfig{builtinFake("alpha")}
			for i := range names {
				names[i] = fmt.Sprintf("joiner%d", i)
				ups = append(ups, toolsUpstream(names[i], names[i]+"_", fmt.Sprintf("forecast_weather_%d", i)))
			}
			g := newGates(t, names...)
			h := launchHub(t, g, Options{Upstreams: ups})
			eventually(t, faultWait, "alpha to connect", func() bool { return statusOf(h, "alpha").State == StateConnected })
			const core = "joiner5_forecast_weather_5"
			s, counts := countingClient(t, transport, ServerOptions{Hub: h, Router: routing.NewRouter(routing.RouterOptions{}), CoreTools: []string{core}})
			before, err := s.ListTools(t.Context(), nil)
			if err != nil {
				t.Fatal(err)
			}
			g.openAll()
			select {
			case <-counts.toolsHeard:
			case <-time.After(faultWait):
				t.Fatal("no tools/list_changed after the core tool's upstream joined")
			}
			eventually(t, faultWait, "the 8 upstreams to join", func() bool {
				for _, n := range names {
					if statusOf(h, n).State != StateConnected {
						return false
					}
				}
				return true
			})
			after, err := s.ListTools(t.Context(), nil)
			if err != nil {
				t.Fatal(err)
			}
			var listed []string
			for _, tool := range after.Tools {
				listed = append(listed, tool.Name)
			}
			if len(after.Tools) != len(before.Tools)+1 || !slices.Contains(listed, core) {
				t.Fatalf("after the joins the client lists %v; want what it listed before and %s", listed, core)
			}
			if _, err := s.ListTools(t.Context(), nil); err != nil { // a round trip more: what was sent is heard
				t.Fatal(err)
			}
			tools, prompts, rsrc := counts.get()
			if tools != 1 || prompts != 0 || rsrc != 0 {
				t.Errorf("list_changed heard: tools %d, prompts %d, resources %d; want 1, 0, 0 (8 joins, one of them the core tool's)", tools, prompts, rsrc)
			}
		})
	}
}

// Without a router a stdio client sees every tool: upstreams joining
// together reach it as one tools/list_changed, and it lists them all.
func TestJoinsTogetherSendOneListChanged(t *testing.T) {
	names := make([]string, 8)
	ups := []UpstreamConfig{builtinFake("alpha")}
	for i := range names {
		names[i] = fmt.Sprintf("joiner%d", i)
		ups = append(ups, toolsUpstream(names[i], names[i]+"_", "ping"))
	}
	g := newGates(t, names...)
	h := launchHub(t, g, Options{Upstreams: ups})
	eventually(t, faultWait, "alpha to connect", func() bool { return statusOf(h, "alpha").State == StateConnected })
	s, counts := countingClient(t, "stdio", ServerOptions{Hub: h})
	g.openAll()
	var listed []string
	for len(listed) < len(names) {
		select {
		case <-counts.toolsHeard:
		case <-time.After(faultWait):
			t.Fatalf("after the joins, the client lists %v; want every joiner's ping", listed)
		}
		res, err := s.ListTools(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		listed = listed[:0]
		for _, tool := range res.Tools {
			if up, ok := strings.CutSuffix(tool.Name, "_ping"); ok && slices.Contains(names, up) {
				listed = append(listed, tool.Name)
			}
		}
	}
	tools, prompts, rsrc := counts.get()
	t.Logf("list_changed heard for 8 joins: tools %d, prompts %d, resources %d", tools, prompts, rsrc)
	if tools > 2 || prompts != 0 || rsrc != 0 {
		// Two at most: the hub rebuilds for the first joiner while the
		// others connect, and then once for all of those.
		t.Errorf("want at most 2 tools/list_changed and no other")
	}
}

// Over HTTP, the tools/list_changed a request_more_tools causes reaches the
// client every time. Sent from within the request, mcp-go dropped it about
// one time in two: the request's stream took it off the session's channel
// as the request ended, found the request done, and discarded it.
func TestBeltChangeHeardOverHTTPEveryTime(t *testing.T) {
	h := startHub(t, builtinFake("alpha"))
	for i := range 50 {
		s, counts := countingClient(t, "http", ServerOptions{Hub: h, Router: routing.NewRouter(routing.RouterOptions{})})
		res, err := s.CallTool(t.Context(), &sdk.CallToolParams{Name: "request_more_tools", Arguments: map[string]any{"query": "echo the text back"}})
		if err != nil || res.IsError {
			t.Fatalf("request_more_tools: %v %+v", err, res)
		}
		select {
		case <-counts.toolsHeard:
		case <-time.After(faultWait):
			t.Fatalf("session %d heard no tools/list_changed after its belt changed", i)
		}
		s.Close()
	}
}

// A catalog tool counts in the tools' fingerprint by the sum the hub's
// signature took of its definition, with its hints: a change of either
// is seen, the same list gives the same fingerprint, and a catalog
// without sums is fingerprinted by encoding its tools.
func TestShownFingerprintSeesDefinitionsAndHints(t *testing.T) {
	catalogOf := func(desc string) *Catalog {
		c := &Catalog{Tools: []Tool{{Name: "a", Def: mcp.Tool{Name: "a", Description: desc}}}}
		signature(c)
		return c
	}
	shown := func(c *Catalog, hint string, always bool) uint64 {
		own := server.ServerTool{Tool: mcp.Tool{Name: "own"}}
		return shownFingerprint([]server.ServerTool{own, {Tool: withHints(c.Tools[0].Def, hint, always)}}, 1, c)
	}
	base := shown(catalogOf("x"), "h", false)
	if shown(catalogOf("x"), "h", false) != base {
		t.Error("the same tools gave another fingerprint")
	}
	for name, fp := range map[string]uint64{"description": shown(catalogOf("y"), "h", false),
		"hint": shown(catalogOf("x"), "g", false), "always load": shown(catalogOf("x"), "h", true)} {
		if fp == base {
			t.Errorf("a change of the %s was not seen", name)
		}
	}
	c := catalogOf("x")
	c.defSums = nil
	tools := []server.ServerTool{{Tool: withHints(c.Tools[0].Def, "h", false)}}
	if shownFingerprint(tools, 0, c) != toolsFingerprint(tools) {
		t.Error("a catalog without sums was not fingerprinted from its tools")
	}
}
