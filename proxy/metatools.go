package proxy

// The glue to package metatools: the Server builds the gateway's own
// tools and gives them views of the hub and of itself.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcp-router/mcp-router/executor"
	"github.com/mcp-router/mcp-router/planner"
	"github.com/mcp-router/mcp-router/proxy/call"
	"github.com/mcp-router/mcp-router/proxy/internal/upstream"
	"github.com/mcp-router/mcp-router/proxy/metatools"
	"github.com/mcp-router/mcp-router/routing"
)

// InputLimits bound the text a model hands the gateway's own tools.
type InputLimits = metatools.InputLimits

// HandleMetaKey is the result _meta key that holds a call's new handle.
const HandleMetaKey = metatools.HandleMetaKey

// QueryMetaKey is the tools/list _meta key under which a client may pass
// its user's message, to get the routed belt in one step.
const QueryMetaKey = metatools.QueryMetaKey

const (
	callToolName         = metatools.CallToolName
	requestMoreToolsName = metatools.RequestMoreToolsName
)

// ReservedNames returns the tool names upstreams may not take.
func ReservedNames() []string { return metatools.Reserved() }

func callOf(ctx context.Context) *call.Call {
	c := call.New(ctx, "", nil)
	if c.Era == call.Stateless { // the client key binds handles, which only this era has
		c.Session, c.Client = "", clientOfCtx(ctx)
	}
	return c
}

// httpEdge is what the HTTP edge learns of a request before mcp-go reads
// it; mcp-go hands its handlers and hooks only the context its HTTP
// context function returned, so this one value rides there.
type httpEdge struct {
	client string // the key of the request's credential; "" for none
	all    bool   // a request to AllPath, which lists every tool
}

type httpEdgeKey struct{}

// withHTTPEdge marks ctx as an HTTP request to path, with the key of its
// credential, which stateless handles and rate limits are bound to.
func withHTTPEdge(ctx context.Context, credential, path string) context.Context {
	e := &httpEdge{all: path == AllPath}
	if credential != "" {
		sum := sha256.Sum256([]byte(credential))
		e.client = hex.EncodeToString(sum[:8])
	}
	return context.WithValue(ctx, httpEdgeKey{}, e)
}

// httpEdgeOf is what the HTTP edge learnt of ctx's request (zero if none).
func httpEdgeOf(ctx context.Context) httpEdge {
	if e, ok := ctx.Value(httpEdgeKey{}).(*httpEdge); ok {
		return *e
	}
	return httpEdge{}
}

// clientOfCtx is the key of ctx's credential, or, behind Guard (which
// removes the header), the principal Guard found.
func clientOfCtx(ctx context.Context) string {
	if c := httpEdgeOf(ctx).client; c != "" {
		return c
	}
	if p := principalName(ctx); p != LocalPrincipal {
		return p
	}
	return ""
}

func (s *Server) newMetaTools(opts ServerOptions) *metatools.Tools {
	if opts.Executor.Logger == nil {
		opts.Executor.Logger = opts.Logger
	}
	hub := hubView{s.hub}
	mo := metatools.Options{
		Catalog: hub, Caller: metaCaller{s}, Starts: hub, Upstreams: hub,
		Executor: newExecutor(hubCaller{hub: s.hub, s: s}, s.hub, opts.Executor),
		Router:   opts.Router, Session: opts.Session, Core: opts.CoreTools, HandleKey: opts.SessionKey.handle,
		Decisions: serverDecisions{s}, Client: metaClient{s}, Planner: opts.Planner, Lessons: opts.Lessons,
		Inputs: opts.Inputs, ErrorResult: errorResult, Logger: opts.Logger,
		Results: s.hub.results, ResultPage: s.hub.opts.ModelResultBytes, Approvals: s.hub.gate,
	}
	if opts.Metrics != nil {
		mo.Metrics = opts.Metrics
	}
	return metatools.New(mo)
}

// ownServerTools are the meta-tools s shows, always loaded.
func (s *Server) ownServerTools() []server.ServerTool {
	var tools []server.ServerTool
	for _, e := range s.meta.Shown() {
		h, plans := e.Handler, e.Def.Name == metatools.RunPlanName || e.Def.Name == metatools.PlanName
		tools = append(tools, server.ServerTool{Tool: withHints(e.Def, ownSearchHint, true),
			Handler: func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				c := callOf(ctx)
				c.Tool, c.Meta, c.Input = req.Params.Name, req.Params.Meta, &req.Params.MultiRoundTripParams
				res, err := h(ctx, c, req)
				if plans && err == nil { // a plan's answer holds its steps' whole results: cut as a tool's
					res = call.CapResult(c, s.hub.opts.ModelResultBytes, s.hub.results, res)
				}
				return res, err
			}})
	}
	return tools
}

// metaTool is c's tool name as the meta-tools read it.
func metaTool(c *Catalog, name string) (metatools.Tool, bool) {
	t, ok := c.Tool(name)
	return metatools.Tool{Name: t.Name, Upstream: t.Upstream, Domain: t.Domain, Server: t.Server, Def: t.Def}, ok
}

// catalogOf is a catalog snapshot as the meta-tools read it.
type catalogOf struct{ c *Catalog }

func (v catalogOf) Tool(name string) (metatools.Tool, bool) { return metaTool(v.c, name) }

// metaCaller is call_tool's way to a catalog tool; a call rerouted by
// holdForStart does not wait again.
type metaCaller struct{ s *Server }

func (m metaCaller) Call(ctx context.Context, c *call.Call) (*mcp.CallToolResult, error) {
	c.StartWaited = startWaited(c.Meta)
	return m.s.callVia(ctx, server.ServerFromContext(ctx), c), nil
}

// hubView is the hub as the meta-tools see it.
type hubView struct{ hub *Hub }

func (h hubView) Await(ctx context.Context, names []string) []metatools.Missing {
	var out []metatools.Missing
	for _, e := range h.hub.awaitNames(ctx, names) {
		out = append(out, metatools.Missing{Tool: e.Tool, Upstream: e.Upstream, Kind: string(e.Kind), Cause: e.Err, Err: e})
	}
	return out
}

func (h hubView) Settle() { h.hub.settle() }

func (h hubView) Tool(name string) (metatools.Tool, bool) { return metaTool(h.hub.Catalog(), name) }

// Upstreams leaves out the upstreams connected with their tools in the
// catalog, most of them most of the time: a list of every upstream cost a
// discovery more allocation than its ranking (26 KiB at 205 upstreams).
func (h hubView) Upstreams() []metatools.Upstream {
	set, dis := h.hub.set().list, h.hub.disabledNow()
	var out []metatools.Upstream
	for _, u := range set {
		st, starting := u.Status(), u.Starting() // until its tools are in the catalog, not only until it connects
		if st.State == StateConnected && !starting {
			continue
		}
		cfg := u.Config()
		out = append(out, metatools.Upstream{Name: u.Name(), Domain: cfg.EffectiveDomain(), About: cfg.Description,
			Connected: st.State == StateConnected, EverConnected: st.EverConnected, Starting: starting,
			Since: st.Since, DownSince: st.DownSince})
	}
	for _, d := range dis.list {
		out = append(out, metatools.Upstream{Name: d.Name, Domain: d.domain(), About: d.Description, Disabled: true, Reason: d.Reason})
	}
	return out
}

func (h hubView) PendingOwner(tool string) string {
	if u := h.hub.pendingOwner(tool); u != nil {
		return u.Name()
	}
	return ""
}

func (h hubView) AwaitStarted(ctx context.Context, names []string) {
	wait := slices.DeleteFunc(h.hub.starting(), func(u *upstream.Upstream) bool { return !slices.Contains(names, u.Name()) })
	h.hub.awaitFirst(ctx, wait, time.Now().Add(h.hub.opts.StartWait))
}

// serverDecisions runs the meta-tools' routing decisions in their spans.
type serverDecisions struct{ s *Server }

func (r serverDecisions) Discover(ctx context.Context, sess *routing.Session, req routing.Request) (routing.Discovery, error) {
	rctx, span := r.s.startRouteSpan(ctx, routeSpanDiscover)
	d, err := sess.Discover(rctx, req)
	endDiscoverySpan(span, d, err)
	if !errors.Is(err, routing.ErrBreakerOpen) {
		r.s.metrics.RouteDone(d.Took, len(d.Selected), alertKinds(d.Alerts))
	}
	return d, err
}

func (r serverDecisions) Preview(ctx context.Context, sess *routing.Session, req routing.Request) routing.Decision {
	rctx, span := r.s.startRouteSpan(ctx, routeSpanPlan)
	d := sess.Preview(rctx, req)
	endRouteSpan(span, d)
	return d
}

// metaClient tells the client of a request what the meta-tools did.
type metaClient struct{ s *Server }

func (m metaClient) ToolsChanged(ctx context.Context, _ *call.Call) { m.s.notifyToolsChanged(ctx) }

func (m metaClient) Progress(ctx context.Context, c *call.Call, done, total int) {
	srv := server.ServerFromContext(ctx)
	if srv == nil || streamGone(ctx) {
		return
	}
	_ = srv.SendNotificationToClient(ctx, string(mcp.MethodNotificationProgress), map[string]any{
		"progressToken": c.Meta.ProgressToken, "progress": done, "total": total,
		"message": fmt.Sprintf("%d of %d steps done", done, total),
	})
}

// withSchema adds the tool's full input schema to the error result of a
// call whose arguments were wrong, so the model can fix them.
func (s *Server) withSchema(res *mcp.CallToolResult, name string, err error) *mcp.CallToolResult {
	if !errors.Is(err, call.ErrInvalidArguments) && !errors.Is(err, mcp.ErrInvalidParams) {
		return res
	}
	t, ok := metaTool(s.hub.Catalog(), name)
	if !ok {
		return res
	}
	res.Content = append(res.Content, mcp.NewTextContent("The tool's definition:\n"+metatools.FullText(t)))
	return res
}

func alertKinds(alerts []routing.Alert) []string {
	out := make([]string, len(alerts))
	for i, a := range alerts {
		out[i] = a.Kind
	}
	return out
}

// startWaitedKey marks, in a rerouted call's _meta, a call that already
// waited for its upstream.
const startWaitedKey = "mcp-router/start-waited"

// holdForStart is a tools/call hook for a name not registered yet whose
// prefix is an upstream's still starting: it waits up to StartWait for it.
// When the tool is still missing, the call is rerouted to call_tool, which
// says the upstream is starting (or down) rather than "unknown tool". A
// name that is nobody's is left to mcp-go (-32602).
func (s *Server) holdForStart(ctx context.Context, _ any, req *mcp.CallToolRequest) {
	name := req.Params.Name
	if metatools.IsOwn(name) || s.mcp.GetTool(name) != nil {
		return
	}
	ctx, id := s.drain.bind(ctx) // a tools/call's request outlives shutdown (drain.go)
	defer s.drain.release(id)
	if s.hub.awaitTool(ctx, name, false) == nil {
		s.hub.settle() // a rebuild may be registering it: let it end
		return
	}
	inner := req.GetArguments()
	if inner == nil {
		inner = map[string]any{}
	}
	meta := &mcp.Meta{AdditionalFields: map[string]any{startWaitedKey: true}}
	if m := req.Params.Meta; m != nil {
		meta.ProgressToken = m.ProgressToken
	}
	req.Params.Name, req.Params.Arguments, req.Params.RawArguments = callToolName, map[string]any{"name": name, "arguments": inner}, nil
	req.Params.Meta = meta
}

// startWaited reports that a call_tool request already waited for its
// upstream (holdForStart rerouted it).
func startWaited(meta *mcp.Meta) bool {
	return meta != nil && meta.AdditionalFields[startWaitedKey] == true
}

// hubCaller is how plans call tools: through the hub, each call counting
// for the session's breaker like a direct call (when there is a server).
type hubCaller struct {
	hub *Hub
	s   *Server // nil outside a server (mcp-router run)
}

func (c hubCaller) CallTool(ctx context.Context, name string, args any) (*mcp.CallToolResult, error) {
	if c.s != nil {
		if err := c.s.rateLimited(ctx, name); err != nil { // each step counts (SEC-15)
			return nil, err
		}
	}
	res, err := c.hub.CallTool(ctx, name, args, nil)
	if c.s != nil {
		step := callOf(ctx)
		step.Tool = name
		c.s.meta.Called(ctx, step, err == nil && !res.IsError)
	}
	return res, err
}

// NewExecutor returns an executor that calls the hub's catalog tools.
func NewExecutor(h *Hub, opts executor.Options) *executor.Executor {
	return newExecutor(hubCaller{hub: h}, h, opts)
}

func newExecutor(c executor.Caller, h *Hub, opts executor.Options) *executor.Executor {
	opts.Caller = c
	opts.Lookup = func(name string) (executor.ToolInfo, bool) {
		t, ok := h.Catalog().Tool(name)
		if !ok {
			return executor.ToolInfo{}, false
		}
		return executor.ToolInfo{Name: t.Name, Upstream: t.Upstream, InputSchema: t.Def.RawInputSchema, OutputSchema: t.Def.RawOutputSchema}, true
	}
	opts.Explain = func(name string) string { return h.Catalog().explainUnknown(name) }
	return executor.New(opts)
}

// PlanResult renders an executed plan; see metatools.PlanResult.
func PlanResult(r *executor.Result) *mcp.CallToolResult { return metatools.PlanResult(r) }

// PlannerRequest hands the planner the routed tools of c and the best
// ranked ones; see metatools.PlannerRequest.
func PlannerRequest(c *Catalog, d routing.Decision, query, context string) planner.Request {
	return metatools.PlannerRequest(catalogOf{c}, d, query, context)
}
