package metatools

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-router/mcp-router/executor"
	"github.com/mcp-router/mcp-router/proxy/call"
	"github.com/mcp-router/mcp-router/routing"
)

// fakeHub is a catalog of two tools, all connected, whose calls are
// recorded: the host as the meta-tools see it.
type fakeHub struct {
	tools map[string]Tool
	calls []call.Call
}

func newFakeHub() *fakeHub {
	h := &fakeHub{tools: map[string]Tool{}}
	for _, t := range []Tool{
		{Name: "calc_add", Upstream: "calc", Domain: "math", Def: mcp.NewTool("calc_add", mcp.WithDescription("Add two numbers."))},
		{Name: "files_read", Upstream: "files", Domain: "files", Def: mcp.NewTool("files_read", mcp.WithDescription("Read a text file from disk."))},
	} {
		t.Def.Name = t.Name
		h.tools[t.Name] = t
	}
	return h
}

func (h *fakeHub) Tool(name string) (Tool, bool) { t, ok := h.tools[name]; return t, ok }

func (h *fakeHub) Call(_ context.Context, c *call.Call) (*mcp.CallToolResult, error) {
	h.calls = append(h.calls, *c)
	return mcp.NewToolResultText("called " + c.Tool), nil
}

func (h *fakeHub) Await(context.Context, []string) []Missing { return nil }

// Discover and Preview run decisions on the session, untraced and uncounted.
func (h *fakeHub) Discover(ctx context.Context, sess *routing.Session, req routing.Request) (routing.Discovery, error) {
	return sess.Discover(ctx, req)
}

func (h *fakeHub) Preview(ctx context.Context, sess *routing.Session, req routing.Request) routing.Decision {
	return sess.Preview(ctx, req)
}
func (h *fakeHub) Settle()                                {}
func (h *fakeHub) Upstreams() []Upstream                  { return nil }
func (h *fakeHub) PendingOwner(string) string             { return "" }
func (h *fakeHub) AwaitStarted(context.Context, []string) {}
func (h *fakeHub) CallTool(context.Context, string, any) (*mcp.CallToolResult, error) {
	return mcp.NewToolResultText("ok"), nil
}

// newTools is the meta-tools over h, with a router that indexes h.
func newTools(t *testing.T, h *fakeHub) *Tools {
	t.Helper()
	return New(Options{Catalog: h, Caller: h, Starts: h, Upstreams: h, Router: h.router(), HandleKey: randomKey(t), Decisions: h,
		Executor: executor.New(executor.Options{Caller: h})})
}

// router is a router that indexes h's tools.
func (h *fakeHub) router() *routing.Router {
	r := routing.NewRouter(routing.RouterOptions{})
	var docs []routing.Tool
	for _, tool := range h.tools {
		docs = append(docs, routing.Tool{Name: tool.Name, Upstream: tool.Upstream, Domain: tool.Domain, Description: tool.Def.Description})
	}
	r.SetUpstream("all", docs)
	return r
}

// handler is the handler of the meta-tool name that tools shows.
func handler(t *testing.T, tools *Tools, name string) Handler {
	t.Helper()
	for _, e := range tools.Shown() {
		if e.Def.Name == name {
			return e.Handler
		}
	}
	t.Fatalf("%s is not shown", name)
	return nil
}

func request(args map[string]any) mcp.CallToolRequest {
	var req mcp.CallToolRequest
	req.Params.Arguments = args
	return req
}

// In the stateless era the routing state of a search travels in the
// handle of its answer, bound to the credential: call_tool given that
// handle calls with the state restored (the call reports to it), and
// hands a handle back; another credential's call starts afresh.
func TestStatelessHandleCarriesTheSearchToTheCall(t *testing.T) {
	h := newFakeHub()
	tools := newTools(t, h)
	ann := func() *call.Call { return &call.Call{Era: call.Stateless, Client: "ann", Principal: "ann"} }

	found, _ := handler(t, tools, RequestMoreToolsName)(t.Context(), ann(), request(map[string]any{"query": "add two numbers"}))
	handle, _ := found.Meta.AdditionalFields[HandleMetaKey].(string)
	if found.IsError || handle == "" || !strings.Contains(text(found), "calc_add") {
		t.Fatalf("request_more_tools: %s, want calc_add and a handle", text(found))
	}

	res, _ := handler(t, tools, CallToolName)(t.Context(), ann(), request(map[string]any{"name": "calc_add", "arguments": map[string]any{"a": 1}, "handle": handle}))
	if len(h.calls) != 1 || h.calls[0].Tool != "calc_add" || h.calls[0].Carried == nil {
		t.Fatalf("calls %+v: want calc_add with the handle's state", h.calls)
	}
	if st := h.calls[0].Carried.Session.State(); !strings.Contains(strings.Join(st.Queries, " "), "add two numbers") {
		t.Errorf("carried state %+v: want the search's query", st)
	}
	if next, _ := res.Meta.AdditionalFields[HandleMetaKey].(string); next == "" || strings.Contains(text(res), "ignored") {
		t.Errorf("call_tool: %s, want a fresh handle and no note", text(res))
	}

	other := &call.Call{Era: call.Stateless, Client: "bob", Principal: "bob"}
	res, _ = handler(t, tools, CallToolName)(t.Context(), other, request(map[string]any{"name": "calc_add", "handle": handle}))
	if !strings.Contains(text(res), "minted for another credential") {
		t.Errorf("another credential's call: %s, want the handle ignored", text(res))
	}
}

// A session's discovery puts the routed tools on its belt (and only
// its): tools/list of that session shows them, another session's does
// not, and a stateless list shows the own tools alone.
func TestBeltIsPerSession(t *testing.T) {
	tools := newTools(t, newFakeHub())
	a, b := &call.Call{Session: "a"}, &call.Call{Session: "b"}
	if res, _ := handler(t, tools, RequestMoreToolsName)(t.Context(), a, request(map[string]any{"query": "read a file from disk"})); res.IsError {
		t.Fatalf("request_more_tools: %s", text(res))
	}
	all := []mcp.Tool{{Name: CallToolName}, {Name: RequestMoreToolsName}, {Name: "calc_add"}, {Name: "files_read"}}
	names := func(c *call.Call) string {
		var out []string
		for _, t := range tools.Filter(c, all) {
			out = append(out, t.Name)
		}
		return strings.Join(out, ",")
	}
	for _, tc := range []struct {
		c    *call.Call
		want string
	}{
		{a, "call_tool,request_more_tools,files_read"},
		{b, "call_tool,request_more_tools"},
		{&call.Call{Era: call.Stateless}, "call_tool,request_more_tools"},
	} {
		if got := names(tc.c); got != tc.want {
			t.Errorf("session %q era %d: got %s, want %s", tc.c.Session, tc.c.Era, got, tc.want)
		}
	}
}

func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			b.WriteString(tc.Text + "\n")
		}
	}
	if res.StructuredContent != nil {
		j, _ := json.Marshal(res.StructuredContent)
		b.Write(j)
	}
	return b.String()
}
