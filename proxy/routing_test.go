package proxy

import (
	"encoding/json"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-router/mcp-router/routing"
)

var routedTransports = []struct {
	name    string
	connect func(*testing.T, ServerOptions) *sdkClient
}{{"http", overHTTPWith}, {"stdio", overStdioWith}}

// routed serves a hub of two fake upstreams with routing on.
func routed(t *testing.T, connect func(*testing.T, ServerOptions) *sdkClient, core ...string) (*sdkClient, *Hub, ServerOptions) {
	t.Helper()
	h := startHub(t, builtinFake("alpha"), builtinFake("beta"))
	opts := ServerOptions{Hub: h, Router: routing.NewRouter(routing.RouterOptions{}), CoreTools: core,
		Session: routing.SessionOptions{MaxDiscoveries: 3, ResetAfter: time.Hour}}
	return connect(t, opts), h, opts
}

func (c *sdkClient) toolNames(t *testing.T) []string {
	t.Helper()
	res, err := c.session.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	return names
}

func (c *sdkClient) waitChanged(t *testing.T) {
	t.Helper()
	select {
	case <-c.changed:
	case <-time.After(5 * time.Second):
		t.Fatal("no notifications/tools/list_changed")
	}
}

func (c *sdkClient) drainChanged() {
	for {
		select {
		case <-c.changed:
		default:
			return
		}
	}
}

type discovery struct {
	Tools []struct {
		Name, Upstream, Domain, Description string
		Score                               float64
		InputSchema                         map[string]any `json:"input_schema"`
	}
	Alerts    []routing.Alert
	Added     []string
	Abstained bool
}

func decodeDiscovery(t *testing.T, res *sdk.CallToolResult) discovery {
	t.Helper()
	var d discovery
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("structuredContent %s: %v", b, err)
	}
	return d
}

func TestRoutingInitialBeltIsSmall(t *testing.T) {
	for _, tr := range routedTransports {
		t.Run(tr.name, func(t *testing.T) {
			c, h, _ := routed(t, tr.connect, "alpha_pid")
			got := c.toolNames(t)
			slices.Sort(got)
			want := []string{"alpha_pid", "call_tool", "describe_tools", "read_result", "request_more_tools", "run_plan"}
			if !slices.Equal(got, want) {
				t.Errorf("initial tools/list %v, want %v (catalog has %d)", got, want, len(h.Catalog().Tools))
			}
		})
	}
}

func TestRoutingRequestMoreToolsAddsToBeltAndCallsThrough(t *testing.T) {
	for _, tr := range routedTransports {
		t.Run(tr.name, func(t *testing.T) {
			c, _, _ := routed(t, tr.connect)
			c.drainChanged()
			res := c.call(t, "request_more_tools", map[string]any{"query": "sleep for some milliseconds", "route": "SIMPLE_TOOL"})
			if res.IsError {
				t.Fatalf("request_more_tools: %s", resultText(res))
			}
			d := decodeDiscovery(t, res)
			if len(d.Tools) == 0 || !strings.HasSuffix(d.Tools[0].Name, "_sleep") || d.Tools[0].InputSchema["type"] != "object" || d.Tools[0].Description == "" {
				t.Fatalf("routed tools %+v, want a _sleep tool with its schema and description", d.Tools)
			}
			if !strings.Contains(resultText(res), d.Tools[0].Name) || !strings.Contains(resultText(res), "call_tool") {
				t.Errorf("result text does not say how to call %s:\n%s", d.Tools[0].Name, resultText(res))
			}
			c.waitChanged(t)
			if names := c.toolNames(t); !slices.Contains(names, d.Tools[0].Name) {
				t.Errorf("tools/list after discovery %v lacks %s", names, d.Tools[0].Name)
			}
			if got := resultText(c.call(t, d.Tools[0].Name, map[string]any{"ms": 1})); !strings.Contains(got, "slept") {
				t.Errorf("direct call of a routed tool: %q", got)
			}
			// Call-through reaches a tool that is not on the belt.
			got := c.call(t, "call_tool", map[string]any{"name": "beta_echo", "arguments": map[string]any{"text": "through"}})
			if got.IsError || resultText(got) != "through" {
				t.Errorf("call_tool beta_echo: %s", resultText(got))
			}
		})
	}
}

func TestRoutingCollisionAlertAndNoMatch(t *testing.T) {
	c, _, _ := routed(t, overHTTPWith)
	d := decodeDiscovery(t, c.call(t, "request_more_tools", map[string]any{"query": "echo the text back"}))
	c.waitChanged(t) // the tools it added
	if len(d.Alerts) == 0 || d.Alerts[0].Kind != "collision" || !strings.Contains(d.Alerts[0].Message, "two instances of one server") {
		t.Errorf("alerts %+v, want a collision between alpha_echo and beta_echo", d.Alerts)
	}
	c.drainChanged()
	res := c.call(t, "request_more_tools", map[string]any{"query": "book a flight to Lisbon"})
	nd := decodeDiscovery(t, res)
	if len(nd.Tools) != 0 || len(nd.Added) != 0 || !nd.Abstained || !strings.Contains(resultText(res), "Nothing in the catalog serves") {
		t.Errorf("no-match query: tools %+v, text %q", nd.Tools, resultText(res))
	}
	select {
	case <-c.changed:
		t.Error("list_changed sent for a discovery that changed nothing")
	case <-time.After(200 * time.Millisecond):
	}
}

func TestRoutingBreaker(t *testing.T) {
	for _, tr := range routedTransports {
		t.Run(tr.name, func(t *testing.T) {
			c, _, _ := routed(t, tr.connect)
			for i := range 3 {
				if res := c.call(t, "request_more_tools", map[string]any{"query": "progress report"}); res.IsError {
					t.Fatalf("discovery %d: %s", i+1, resultText(res))
				}
			}
			if slices.Contains(c.toolNames(t), "request_more_tools") {
				t.Error("request_more_tools still listed after 3 discoveries")
			}
			res := c.call(t, "request_more_tools", map[string]any{"query": "anything"})
			if !res.IsError || !strings.Contains(resultText(res), "paused") {
				t.Errorf("4th discovery: isError %v, %q; want the breaker alert", res.IsError, resultText(res))
			}
			c.drainChanged()
			if got := c.call(t, "call_tool", map[string]any{"name": "alpha_echo", "arguments": map[string]any{"text": "ok"}}); got.IsError {
				t.Fatalf("echo: %s", resultText(got))
			}
			c.waitChanged(t)
			if !slices.Contains(c.toolNames(t), "request_more_tools") {
				t.Error("a successful call did not restore request_more_tools")
			}
		})
	}
}

func TestRoutingBeltsArePerSession(t *testing.T) {
	h := startHub(t, builtinFake("alpha"))
	opts := ServerOptions{Hub: h, Router: routing.NewRouter(routing.RouterOptions{})}
	srv := NewServer(opts)
	t.Cleanup(srv.Close)
	ts := httptest.NewServer(srv.HTTPHandler())
	t.Cleanup(ts.Close)
	a, b := sdkOverHTTP(t, ts.URL), sdkOverHTTP(t, ts.URL)
	a.call(t, "request_more_tools", map[string]any{"query": "sleep for some milliseconds"})
	if !slices.Contains(a.toolNames(t), "alpha_sleep") {
		t.Fatal("session A lacks its routed tool")
	}
	if names := b.toolNames(t); slices.Contains(names, "alpha_sleep") {
		t.Errorf("session B sees A's belt: %v", names)
	}
}

func TestRoutingQueryInListMeta(t *testing.T) {
	c, _, _ := routed(t, overHTTPWith)
	res, err := c.session.ListTools(t.Context(), &sdk.ListToolsParams{Meta: sdk.Meta{QueryMetaKey: "count cancelled calls"}})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	if !slices.ContainsFunc(names, func(n string) bool { return strings.HasSuffix(n, "_cancellations") }) {
		t.Errorf("tools/list with a query in _meta: %v, want a _cancellations tool", names)
	}
}

// request_more_tools takes "keywords" for the lexical ranking and
// "intent" for the semantic one, and says which key is malformed.
func TestRoutingKeywordsAndIntent(t *testing.T) {
	c, _, _ := routed(t, overHTTPWith)
	d := decodeDiscovery(t, c.call(t, "request_more_tools", map[string]any{
		"query": "I need to do that thing again", "keywords": []any{"echo", "text"}, "intent": "Echo a text back."}))
	if len(d.Tools) == 0 || !strings.HasSuffix(d.Tools[0].Name, "_echo") {
		t.Errorf("with keywords echo text: tools %+v, want an echo tool first", d.Tools)
	}
	for _, bad := range []map[string]any{
		{"query": "x", "keywords": 5},
		{"query": "x", "keywords": []any{"a", 1}},
		{"query": "x", "intent": []any{"a"}},
		{"query": "x", "intent": strings.Repeat("a", 2000)},
	} {
		res := c.call(t, "request_more_tools", bad)
		if !res.IsError || !(strings.Contains(resultText(res), `"keywords"`) || strings.Contains(resultText(res), `"intent"`)) {
			t.Errorf("request_more_tools %v: %q, want an error naming the key", bad, resultText(res))
		}
	}
}

// request_more_tools takes "top_k" (or the legacy "topk"), a whole
// number from 1 to 50, and names the key when it is not one.
func TestRoutingTopKAndLegacyTopk(t *testing.T) {
	c, _, _ := routed(t, overHTTPWith)
	count := func(args map[string]any) int {
		res := c.call(t, "request_more_tools", args)
		if res.IsError {
			t.Fatalf("request_more_tools %v: %s", args, resultText(res))
		}
		return len(decodeDiscovery(t, res).Tools)
	}
	one := count(map[string]any{"query": "echo some text", "topk": 1})
	many := count(map[string]any{"query": "echo some text", "top_k": 10})
	if one == 0 || many < one {
		t.Errorf("topk 1 gave %d tools, top_k 10 gave %d; want some, and no fewer with 10", one, many)
	}
	for _, bad := range []map[string]any{
		{"query": "x", "top_k": 0}, {"query": "x", "top_k": 51}, {"query": "x", "topk": 2.5}, {"query": "x", "topk": "3"},
	} {
		res := c.call(t, "request_more_tools", bad)
		if !res.IsError || !strings.Contains(resultText(res), "top") {
			t.Errorf("request_more_tools %v: %q, want an error naming the key", bad, resultText(res))
		}
	}
}
