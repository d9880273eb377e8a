package proxy

import (
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-router/mcp-router/routing"
)

// toolsByName lists c's tools by name.
func toolsByName(t *testing.T, c *sdkClient) map[string]*sdk.Tool {
	t.Helper()
	res, err := c.session.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*sdk.Tool{}
	for _, tool := range res.Tools {
		out[tool.Name] = tool
	}
	return out
}

// The proxy's own tools and the core tools carry
// _meta["anthropic/alwaysLoad"]: true, so a client that defers tools
// behind its own search keeps them loaded; every tool carries a
// searchHint naming its server, and a routed tool is not always loaded.
func TestOwnAndCoreToolsAlwaysLoadEveryToolHasASearchHint(t *testing.T) {
	for _, tr := range routedTransports {
		t.Run(tr.name, func(t *testing.T) {
			c, _, _ := routed(t, tr.connect, "alpha_pid")
			tools := toolsByName(t, c)
			for _, name := range []string{"call_tool", "request_more_tools", "describe_tools", "run_plan", "alpha_pid"} {
				tool, ok := tools[name]
				if !ok {
					t.Fatalf("%s not listed; got %v", name, mapKeys(tools))
				}
				if tool.Meta[AlwaysLoadMetaKey] != true {
					t.Errorf("%s _meta %v: want %s true", name, tool.Meta, AlwaysLoadMetaKey)
				}
				if h, _ := tool.Meta[SearchHintMetaKey].(string); h == "" {
					t.Errorf("%s has no %s", name, SearchHintMetaKey)
				}
			}
			if h := tools["alpha_pid"].Meta[SearchHintMetaKey]; h != "alpha" {
				t.Errorf("alpha_pid searchHint %q, want its server %q", h, "alpha")
			}
			c.call(t, "request_more_tools", map[string]any{"query": "echo the text back", "tools": []any{"beta_echo"}})
			routedTool, ok := toolsByName(t, c)["beta_echo"]
			if !ok {
				t.Fatal("beta_echo not on the belt after request_more_tools named it")
			}
			if _, on := routedTool.Meta[AlwaysLoadMetaKey]; on {
				t.Errorf("routed tool beta_echo carries %s: only own and core tools stay loaded", AlwaysLoadMetaKey)
			}
			if h := routedTool.Meta[SearchHintMetaKey]; h != "beta" {
				t.Errorf("beta_echo searchHint %q, want %q", h, "beta")
			}
		})
	}
}

func mapKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// The searchHint names the server, its domain and what it is for, and an
// upstream cannot make its own tool always loaded.
func TestSearchHintNamesServerDomainAndPurpose(t *testing.T) {
	tool := Tool{Name: "notes_find", Upstream: "notes", Domain: "knowledge", Server: "My personal\nnotes, in Markdown."}
	if got, want := searchHint(tool), "notes, knowledge: My personal notes, in Markdown."; got != want {
		t.Errorf("searchHint %q, want %q", got, want)
	}
	tool.Server = strings.Repeat("long words ", 100)
	if got := searchHint(tool); len(got) > maxSearchHint {
		t.Errorf("searchHint of %d bytes, want at most %d", len(got), maxSearchHint)
	}
	def := mcp.Tool{Name: "notes_find", Meta: mcp.NewMetaFromMap(map[string]any{AlwaysLoadMetaKey: true, "other": 1})}
	got := withHints(def, "notes", false)
	if _, on := got.Meta.AdditionalFields[AlwaysLoadMetaKey]; on {
		t.Errorf("an upstream's own alwaysLoad passed through: %v", got.Meta.AdditionalFields)
	}
	if got.Meta.AdditionalFields["other"] != 1 {
		t.Errorf("the upstream's other _meta keys were dropped: %v", got.Meta.AdditionalFields)
	}
	if def.Meta.AdditionalFields[AlwaysLoadMetaKey] != true {
		t.Error("withHints modified the upstream's definition")
	}
}

// The instructions are generated from the catalog (tool count, servers by
// domain, when to use the proxy's own tools), stay under their bound with
// hundreds of servers, and a client that connects after the catalog
// changed reads the new ones.
func TestInstructionsFollowTheCatalog(t *testing.T) {
	g := newGates(t, "late")
	h := launchHub(t, g, Options{Upstreams: []UpstreamConfig{builtinFake("alpha"), toolsUpstream("late", "late_", "ping", "pong")}})
	eventually(t, faultWait, "alpha's tools", func() bool { return len(h.Catalog().Tools) > 0 })
	srv := NewServer(ServerOptions{Hub: h, Router: routing.NewRouter(routing.RouterOptions{})})
	t.Cleanup(srv.Close)
	ts := httptest.NewServer(srv.HTTPHandler())
	t.Cleanup(ts.Close)
	n := len(h.Catalog().Tools)
	first := sdkAt(t, ts.URL+"/mcp").session.InitializeResult().Instructions
	for _, want := range []string{"gateway to " + strconv.Itoa(n) + " tools from 1 MCP server", "alpha", "request_more_tools", "describe_tools", "call_tool", "run_plan"} {
		if !strings.Contains(first, want) {
			t.Errorf("instructions lack %q:\n%s", want, first)
		}
	}
	g.open("late")
	eventually(t, faultWait, "late to join the catalog", func() bool { return len(h.Catalog().Tools) == n+2 })
	second := sdkAt(t, ts.URL+"/mcp").session.InitializeResult().Instructions
	if want := "gateway to " + strconv.Itoa(n+2) + " tools from 2 MCP servers"; !strings.Contains(second, want) {
		t.Errorf("instructions after late joined lack %q:\n%s", want, second)
	}
	all := sdkAt(t, ts.URL+AllPath).session.InitializeResult().Instructions
	if !strings.Contains(all, "Every tool is listed") || strings.Contains(all, "request_more_tools") {
		t.Errorf("instructions at %s should say every tool is listed, without request_more_tools:\n%s", AllPath, all)
	}

	var big Catalog
	for i := range 300 {
		big.Tools = append(big.Tools, Tool{Name: "t" + strconv.Itoa(i), Upstream: "server" + strconv.Itoa(i), Domain: "domain" + strconv.Itoa(i%40)})
	}
	text := catalogInstructions(&big, nil, true, true)
	if len(text) > maxInstructions || !strings.Contains(text, "more domains") || !strings.Contains(text, "run_plan") {
		t.Errorf("instructions for 300 servers (%d bytes, bound %d) should count the servers past the bound and keep the usage:\n%s",
			len(text), maxInstructions, text)
	}
}

// /mcp/all lists every catalog tool, each description naming its server,
// beside the routed /mcp of the same server; its calls go through the
// same limits (here the rate limit) as any other.
func TestAllEndpointListsEveryToolWithLimits(t *testing.T) {
	h := startHub(t, builtinFake("alpha"), builtinFake("beta"))
	srv := NewServer(ServerOptions{Hub: h, Router: routing.NewRouter(routing.RouterOptions{}),
		Session:   routing.SessionOptions{MaxDiscoveries: 3, ResetAfter: time.Hour},
		RateLimit: RateLimit{CallsPerSecond: 0.001, Burst: 1}})
	t.Cleanup(srv.Close)
	ts := httptest.NewServer(srv.HTTPHandler())
	t.Cleanup(ts.Close)
	all := sdkAt(t, ts.URL+AllPath)
	tools := toolsByName(t, all)
	for _, ct := range h.Catalog().Tools {
		tool, ok := tools[ct.Name]
		if !ok {
			t.Errorf("%s not listed at %s", ct.Name, AllPath)
			continue
		}
		if !strings.Contains(tool.Description, "Server: "+ct.Upstream) {
			t.Errorf("%s description %q does not name its server", ct.Name, tool.Description)
		}
	}
	if belt := toolsByName(t, sdkAt(t, ts.URL+"/mcp")); len(belt) >= len(tools) {
		t.Errorf("/mcp lists %d tools, /mcp/all %d: /mcp should keep the belt", len(belt), len(tools))
	}
	if got := resultText(all.call(t, "beta_echo", map[string]any{"text": "through all"})); got != "through all" {
		t.Errorf("beta_echo at %s: got %q", AllPath, got)
	}
	res := all.call(t, "beta_echo", map[string]any{"text": "again"})
	if !res.IsError || !strings.Contains(resultText(res), "rate") {
		t.Errorf("second call past a burst of 1: got %v %q, want the rate limit's error", res.IsError, resultText(res))
	}
}

// sdkAt connects a new client session to the proxy endpoint at url.
func sdkAt(t *testing.T, url string) *sdkClient {
	t.Helper()
	cl, c := newSDKClient()
	s, err := cl.Connect(t.Context(), &sdk.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, sessionEra)
	if err != nil {
		t.Fatalf("connect to %s: %v", url, err)
	}
	c.session = s
	t.Cleanup(func() { s.Close() })
	return c
}

// The headline counts in English: one tool, one server, never "1 more servers".
func TestHeadlineCountsInEnglish(t *testing.T) {
	one := []pendingServer{{Name: "notes", State: pendingStarting}}
	for _, c := range []struct {
		tools, connected int
		pending          []pendingServer
		want             string
	}{
		{1, 1, nil, "gateway to 1 tool from 1 MCP server, named"},
		{7, 2, nil, "gateway to 7 tools from 2 MCP servers, named"},
		{3, 1, one, "gateway to 3 tools from 1 MCP server so far, and 1 more not connected yet"},
	} {
		if got := headline(c.tools, c.connected, c.pending); !strings.Contains(got, c.want) {
			t.Errorf("headline(%d, %d, %d pending) = %q, want it to hold %q", c.tools, c.connected, len(c.pending), got, c.want)
		}
	}
}
