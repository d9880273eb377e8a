package proxy

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"golang.org/x/time/rate"

	"github.com/mcp-router/mcp-router/executor"
	"github.com/mcp-router/mcp-router/internal/defaults"
	"github.com/mcp-router/mcp-router/planner"
	"github.com/mcp-router/mcp-router/proxy/call"
	"github.com/mcp-router/mcp-router/proxy/frontdoor"
	"github.com/mcp-router/mcp-router/proxy/internal/wire"
	"github.com/mcp-router/mcp-router/proxy/metatools"
	"github.com/mcp-router/mcp-router/proxy/results"
	"github.com/mcp-router/mcp-router/proxy/upstreamauth"
	"github.com/mcp-router/mcp-router/routing"
	"github.com/mcp-router/mcp-router/routing/lessons"
)

// ServerOptions configures a Server. Zero values take the defaults in brackets.
type ServerOptions struct {
	// Hub is the upstream side; required.
	Hub *Hub
	// Logger receives lifecycle and per-request debug events; nil is silent.
	Logger *slog.Logger
	// Name and Version identify the proxy to clients ["mcp-router", "dev"].
	Name, Version string
	// Instructions tell the model how to use the proxy [generated from the
	// catalog].
	Instructions string
	// Router, when set, routes: each session sees a belt. Nil shows every
	// catalog tool (routing mode "all").
	Router *routing.Router
	// CoreTools are always on the belt (exposed names).
	CoreTools []string
	// Session configures each session's belt and breaker.
	Session routing.SessionOptions
	// Executor configures run_plan (its Caller and Lookup are the hub's).
	Executor executor.Options
	// Planner, when set, offers the plan tool (a local chat model).
	Planner *planner.Planner
	// Metrics, when set, counts sessions, routing, belts and plans.
	Metrics *Metrics
	// Lessons, when set, learns from detours and offers routing_feedback.
	Lessons *lessons.Memory
	// DisconnectGrace is how long a call goes on after its HTTP client
	// drops the stream [DefaultDisconnectGrace]; negative cancels at once.
	DisconnectGrace time.Duration
	// RateLimit bounds each session's tool calls [no limit].
	RateLimit RateLimit
	// Inputs bound the queries and notes the proxy's own tools take.
	Inputs InputLimits
	// StdioCalls is how many tool calls of a stdio client run at once
	// [DefaultStdioCalls, at most MaxStdioCalls].
	StdioCalls int
	// SessionKey seals session ids and signs handles; replicas that share
	// it accept each other's [a key random to this process].
	SessionKey *SessionKey
	// EndedSessions, when set, shares the sessions ended by a DELETE with
	// every replica [a DELETE ends a session in this process alone].
	EndedSessions EndedSessions
}

// Bounds of ServerOptions.StdioCalls. The default matches one streamable
// HTTP session's streams (frontdoor.DefaultMaxStreamsPerSession); the most
// bounds the goroutines one stdio client can make the proxy hold.
const (
	DefaultStdioCalls = 32
	MaxStdioCalls     = 100
	// StdioQueue is how many more stdio calls may wait for a worker; past
	// them a call is refused with queue_full.
	StdioQueue = 100
)

// Server is the client-facing MCP server: it shows the catalog and the
// proxy's own tools, and forwards calls, resources and prompts to the Hub.
type Server struct {
	hub        *Hub
	logger     *slog.Logger
	mcp        *server.MCPServer
	meta       *metatools.Tools // the gateway's own tools, and the belts
	index      *indexer
	planner    *planner.Planner
	metrics    *Metrics
	inputs     InputLimits
	core       []string           // core tools: on every belt, and always loaded
	impl       mcp.Implementation // the gateway's name and version, which results of the stateless era carry
	stdioCalls int

	// fixedInstructions, when set, replace the generated instructions.
	fixedInstructions string
	instructions      atomic.Pointer[instructionsCache]

	subs     subscriptions
	inflight inflightIDs
	drain    drain
	graces   *graces     // nil when a dropped stream cancels at once
	limits   *rateLimits // nil without a rate limit

	ids      *sealedIDs // HTTP session ids
	resumeMu sync.Mutex // one session resumed at a time
	httpOnce sync.Once
	http     *server.StreamableHTTPServer

	syncMu    sync.Mutex // one sync at a time sets the lists
	lists     syncedLists
	httpGates sync.Map // the list gates of HTTP sessions, by session id
}

// NewServer builds the client-facing server and keeps it in step with the
// hub's catalog. It does no I/O.
func NewServer(opts ServerOptions) *Server {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	opts.Name, opts.Version = cmp.Or(opts.Name, "mcp-router"), cmp.Or(opts.Version, "dev")
	opts.Inputs = opts.Inputs.WithDefaults()
	defaults.Set(&opts.StdioCalls, DefaultStdioCalls)
	if opts.SessionKey == nil {
		opts.SessionKey = RandomSessionKey()
	}
	s := &Server{ids: newSealedIDs(opts.SessionKey), hub: opts.Hub, logger: opts.Logger, planner: opts.Planner, metrics: opts.Metrics, inputs: opts.Inputs,
		core: opts.CoreTools, fixedInstructions: opts.Instructions, stdioCalls: min(opts.StdioCalls, MaxStdioCalls)}
	s.ids.shared, s.ids.log = opts.EndedSessions, opts.Logger
	s.meta = s.newMetaTools(opts)
	hooks := &server.Hooks{}
	hooks.AddOnRegisterSession(func(context.Context, server.ClientSession) { s.metrics.SessionOpened() })
	hooks.AddOnUnregisterSession(func(context.Context, server.ClientSession) { s.metrics.SessionClosed() })
	s.inflight.hook(hooks, func(ctx context.Context, key callKey) {
		if s.graces != nil {
			s.graces.posted(ctx, key)
		}
	})
	hooks.AddOnUnregisterSession(func(_ context.Context, cs server.ClientSession) {
		s.hub.limits.Forget(cs.SessionID())
		s.httpGates.Delete(cs.SessionID())
	})
	hooks.AddBeforeCallTool(s.holdForStart)
	hooks.AddBeforeReadResource(s.holdReadForStart)
	hooks.AddBeforeGetPrompt(s.holdPromptForStart)
	hooks.AddAfterListResourceTemplates(hideStartingTemplate)
	s.hookCalls(opts, hooks)
	s.hookListGate(hooks)
	hooks.AddAfterInitialize(func(ctx context.Context, _ any, _ *mcp.InitializeRequest, res *mcp.InitializeResult) {
		res.Instructions = s.instructionsFor(ctx)
	})
	hooks.AddAfterDiscover(func(ctx context.Context, _ any, _ *mcp.DiscoverRequest, res *mcp.DiscoverResult) {
		res.Instructions = s.instructionsFor(ctx)
	})
	srvOpts := []server.ServerOption{
		server.WithToolCapabilities(true),
		server.WithResourceCapabilities(true, true),
		server.WithPromptCapabilities(true),
		server.WithInstructions(cmp.Or(opts.Instructions, "mcp-router")), // replaced per client by the hooks above
		server.WithRecovery(),
		server.WithHooks(hooks),
	}
	srvOpts = append(srvOpts, s.passthroughOptions(hooks)...)
	srvOpts = append(srvOpts, s.traceRequests()...)
	if opts.Router != nil {
		s.index = newIndexer(opts.Router, opts.Logger)
		hooks.AddOnUnregisterSession(func(_ context.Context, cs server.ClientSession) { s.meta.Forget(cs.SessionID()) })
		hooks.AddBeforeListTools(s.routeFromMeta)
	}
	srvOpts = append(srvOpts, server.WithToolFilter(s.filterTools))
	s.mcp = server.NewMCPServer(opts.Name, opts.Version, srvOpts...)
	s.impl = mcp.Implementation{Name: opts.Name, Version: opts.Version}
	s.useCallMiddleware()
	opts.Hub.SetRelay(s)
	opts.Hub.Follow(s.sync) // a catalog the hub stores meanwhile is not missed
	return s
}

// CancelCalls cancels every tool call of the HTTP clients, those in a
// disconnect grace period included, and ends their other requests; each
// call is still answered (Close does it too).
func (s *Server) CancelCalls() {
	s.drain.close()
	if s.graces != nil {
		s.graces.close()
	}
}

// Close ends the HTTP sessions and stops the background embedding.
func (s *Server) Close() {
	if s.http != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = s.http.Shutdown(ctx)
		cancel()
	}
	s.CancelCalls()
	if s.index != nil {
		s.index.close()
	}
}

// routeFromMeta routes a session's belt from the user's message that a
// programmatic client passed with tools/list.
func (s *Server) routeFromMeta(ctx context.Context, _ any, req *mcp.ListToolsRequest) {
	q := metatools.QueryFromMeta(req.Params.Meta)
	if q == "" || s.allMode(ctx) || server.IsModernRequest(ctx) { // a stateless list never depends on other requests
		return
	}
	if len(q) > s.inputs.MaxQueryBytes { // a hook cannot fail the request: the belt is listed as it is
		s.logger.Warn("tools/list query ignored: too long", "session_id", sessionTagOf(ctx), "bytes", len(q), "limit", s.inputs.MaxQueryBytes)
		return
	}
	sess := s.meta.Session(callOf(ctx))
	rctx, span := s.startRouteSpan(ctx, routeSpanList)
	d := sess.Preview(rctx, routing.Request{Principal: principalName(ctx), Query: q, Exclude: metatools.IsOwn})
	endRouteSpan(span, d)
	sess.Load(d.Selected)
	s.metrics.RouteDone(d.Took, len(d.Selected), alertKinds(d.Alerts))
	s.meta.ReportBelts()
}

// filterTools lists every tool, descriptions enriched, in all mode, and
// the session's belt otherwise.
func (s *Server) filterTools(ctx context.Context, tools []mcp.Tool) []mcp.Tool {
	if len(tools) <= 1 { // a call: every registered tool stays callable
		return tools
	}
	if !s.allMode(ctx) {
		return s.meta.Filter(callOf(ctx), tools)
	}
	c := s.hub.Catalog()
	out := make([]mcp.Tool, len(tools))
	for i, def := range tools {
		out[i] = def
		if t, ok := c.Tool(def.Name); ok {
			out[i] = enriched(def, t)
		}
	}
	return out
}

// instructionsFor is what ctx's client is told about the gateway.
func (s *Server) instructionsFor(ctx context.Context) string {
	if s.fixedInstructions != "" {
		return s.fixedInstructions
	}
	c, pending := s.hub.Catalog(), s.hub.pendingServers()
	gen := s.instructions.Load()
	if gen == nil || gen.catalog != c || !slices.Equal(gen.pending, pending) {
		gen = &instructionsCache{catalog: c, pending: pending, routed: catalogInstructions(c, pending, s.meta.Routes(), s.planner != nil),
			all: catalogInstructions(c, pending, false, s.planner != nil)}
		s.instructions.Store(gen)
	}
	if s.allMode(ctx) {
		return gen.all
	}
	return gen.routed
}

// instructionsCache holds the instructions generated for one catalog.
type instructionsCache struct {
	catalog     *Catalog
	pending     []pendingServer
	routed, all string
}

func (s *Server) notifyToolsChanged(ctx context.Context) {
	if server.IsModernRequest(ctx) { // stateless: its list did not change
		return
	}
	if s.holdToolsChanged(ctx) { // sent once the HTTP request ends
		return
	}
	if err := s.mcp.SendNotificationToClient(ctx, string(mcp.MethodNotificationToolsListChanged), nil); err != nil {
		s.logger.Debug("tools list_changed not sent", "session_id", sessionTagOf(ctx), "err", err)
	}
}

// HTTPHandler serves streamable HTTP at /mcp and AllPath, in both protocol
// eras. Session ids are sealed (sessionseal.go), so a replica with the
// same session key resumes them; each POSTed message is pre-checked (the
// Host check and the body limit are Guard's).
func (s *Server) HTTPHandler() http.Handler {
	s.httpOnce.Do(func() {
		s.http = server.NewStreamableHTTPServer(s.mcp,
			server.WithEndpointPath("/mcp"),
			server.WithHTTPContextFunc(func(ctx context.Context, r *http.Request) context.Context {
				// Handles are bound to the caller the front door found, else
				// to the Authorization header; its token stays in ctx for
				// upstreams that exchange it (RFC 8693).
				ctx = withHTTPEdge(wire.WithPrechecked(ctx, r.Body), cmp.Or(frontdoor.PrincipalOf(ctx), r.Header.Get("Authorization")), r.URL.Path)
				if t := frontdoor.CallerTokenOf(ctx); t != "" {
					ctx = upstreamauth.WithCallerToken(ctx, t)
				} else {
					ctx = upstreamauth.WithCallerAuthorization(ctx, r.Header.Get("Authorization"))
				}
				return ctx
			}),
			server.WithStreamableHTTPLogger(s.logger),
			server.WithSessionIdManagerResolver(s.ids),
			server.WithSessionIdleTTL(sessionIdleTTL),
			server.WithDisableLocalhostProtection(true),
		)
	})
	checked := wire.PrecheckHTTP{Next: drainHTTP{answerCancelled{gateHTTP{next: s.http, s: s}}, &s.drain}, Log: s.logger, Cancelled: s.graces.cancelled}
	return resumeHTTP{next: checked, mcp: s.http, ids: s.ids, log: s.logger, mu: &s.resumeMu}
}

// AllPath is the HTTP path that lists every tool, with enriched
// descriptions, for clients that search tools themselves.
const AllPath = "/mcp/all"

// sessionIdleTTL frees the sessions of HTTP clients that never say goodbye.
const sessionIdleTTL = frontdoor.SessionIdleTTL

var _ http.Handler = (*server.StreamableHTTPServer)(nil)

// sync shows the catalog and the proxy's own tools. Each list is set
// again only when it changed: mcp-go tells every session of each set.
func (s *Server) sync(c *Catalog) {
	tools := s.ownServerTools()
	own := len(tools)
	if s.meta.Routes() {
		s.index.update(c)
		s.meta.Retain(func(name string) bool { _, ok := c.Tool(name); return ok })
	}
	tools = s.catalogTools(c, tools)
	s.syncMu.Lock()
	defer s.syncMu.Unlock()
	if s.lists.changed(listTools, shownFingerprint(tools, own, c)) {
		s.mcp.SetTools(tools...)
	}
	if s.lists.changed(listPrompts, catalogFingerprint(c, string(mcp.MethodNotificationPromptsListChanged))) {
		s.syncPrompts(c)
	}
	if s.lists.changed(listResources, catalogFingerprint(c, string(mcp.MethodNotificationResourcesListChanged))) {
		s.syncResources(c)
	}
}

// catalogTools appends c's tools, as clients are shown them, to tools.
func (s *Server) catalogTools(c *Catalog, tools []server.ServerTool) []server.ServerTool {
	shared := map[[3]string]*mcp.Meta{} // by server: one _meta for its tools that have none of their own
	tools = slices.Grow(tools, len(c.Tools))
	for _, t := range c.Tools {
		def, always, key := t.Def, slices.Contains(s.core, t.Name), [3]string{t.Upstream, t.Domain, t.Server}
		if m := shared[key]; m != nil && def.Meta == nil && !always {
			def.Meta = m
		} else if def = withHints(def, searchHint(t), always); t.Def.Meta == nil && !always {
			shared[key] = def.Meta
		}
		tools = append(tools, server.ServerTool{Tool: def, Handler: s.forward(t.Name)})
	}
	return tools
}

func (s *Server) syncPrompts(c *Catalog) {
	prompts := make([]server.ServerPrompt, 0, len(c.Prompts))
	for _, p := range c.Prompts {
		name := p.Name
		prompts = append(prompts, server.ServerPrompt{Prompt: p.Def, Handler: func(ctx context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return s.hub.GetPrompt(ctx, name, req.Params.Arguments)
		}})
	}
	s.mcp.SetPrompts(prompts...)
}

func (s *Server) syncResources(c *Catalog) {
	res := make([]server.ServerResource, 0, len(c.Resources))
	for _, r := range c.Resources {
		res = append(res, server.ServerResource{Resource: r.Def, Handler: s.readFrom(r.Upstream)})
	}
	s.mcp.SetResources(res...)
	tpl := make([]server.ServerResourceTemplate, 0, len(c.Templates)+1)
	tpl = append(tpl, server.ServerResourceTemplate{Template: results.Template(), Handler: s.readKept})
	for _, t := range c.Templates {
		tpl = append(tpl, server.ServerResourceTemplate{Template: t.Def, Handler: server.ResourceTemplateHandlerFunc(s.readFrom(t.Upstream))})
	}
	tpl = append(tpl, server.ServerResourceTemplate{Template: startingTemplate(), Handler: s.readStarting})
	s.mcp.SetResourceTemplates(tpl...)
}

// readKept reads the whole of a result the cap stage cut, for the
// principal that made the call only.
func (s *Server) readKept(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
	contents, err := s.hub.results.ReadResource(call.New(ctx, "", nil).Who(), req.Params.URI)
	if errors.Is(err, results.ErrNotFound) {
		return nil, fmt.Errorf("%w: %w", server.ErrResourceNotFound, err)
	}
	return contents, err
}

func (s *Server) readFrom(upstream string) server.ResourceHandlerFunc {
	return func(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
		if strings.HasPrefix(req.Params.URI, results.Scheme) { // the gateway's own, whichever upstream template matched it first
			return s.readKept(ctx, req)
		}
		if strings.HasPrefix(req.Params.URI, startingScheme) {
			return s.readStarting(ctx, req)
		}
		res, err := s.hub.ReadResource(ctx, upstream, req)
		if err != nil {
			return nil, err
		}
		return res.Contents, nil
	}
}

// forward is the handler of a catalog tool shown under its exposed name.
func (s *Server) forward(name string) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		c := callOf(ctx)
		c.Tool, c.Args, c.Meta, c.Input = name, arguments(req.Params), req.Params.Meta, &req.Params.MultiRoundTripParams
		return s.callVia(ctx, server.ServerFromContext(ctx), c), nil
	}
}

// callVia forwards c, as the edge built it, with progress through srv (nil:
// none), and turns a failure into an isError result the model can read.
func (s *Server) callVia(ctx context.Context, srv *server.MCPServer, c *call.Call) *mcp.CallToolResult {
	name := c.Tool
	progress := progressTo(ctx, srv, c.Meta)
	c.Progress = progress.fn()
	res, err := s.hub.Call(ctx, c)
	progress.settle()
	if ue, ok := errors.AsType[*UpstreamError](err); ok && isOutage(ue.Kind) {
		s.meta.NoteOutage(c)
	}
	s.meta.Called(ctx, c, err == nil && (!res.IsError || call.Withheld(res)))
	if err != nil {
		s.logger.Debug("call failed", "tool", name, "err", err)
		return s.withSchema(errorResult(err), name, err)
	}
	return res
}

// isOutage reports a call that failed because its upstream was not there.
func isOutage(k Kind) bool {
	return k == call.KindUnavailable || k == call.KindStarting || k == call.KindCircuitOpen
}

// arguments keeps the client's arguments as sent (large integers intact).
func arguments(p mcp.CallToolParams) any {
	if len(p.RawArguments) > 0 {
		return json.RawMessage(p.RawArguments)
	}
	return p.Arguments
}

// progressRelay relays upstream progress to one caller under its token.
type progressRelay struct {
	ctx   context.Context
	out   func(params map[string]any) // sends one notifications/progress
	token mcp.ProgressToken
	limit *rate.Limiter // safe for concurrent use

	mu       sync.Mutex
	last     float64   // the last progress accepted
	lastSent time.Time // when a notification last went out
	pending  *Progress // accepted but held back by the rate limit
}

// Progress to one call is rate limited (the spec asks for it): what the
// limit holds back is replaced by newer values, the latest sent before
// the result; a final value (progress = total) always goes out.
const (
	progressBurst = 16
	progressRate  = 50.0
)

// progressTo returns a relay for the caller of ctx through srv, or nil
// when there is none or no progress was asked for.
func progressTo(ctx context.Context, srv *server.MCPServer, meta *mcp.Meta) *progressRelay {
	if meta == nil || meta.ProgressToken == nil || srv == nil {
		return nil
	}
	out := func(params map[string]any) {
		if !streamGone(ctx) { // a dropped stream's call goes on, unheard (FI-19)
			_ = srv.SendNotificationToClient(ctx, string(mcp.MethodNotificationProgress), params)
		}
	}
	return newProgressRelay(ctx, meta.ProgressToken, out)
}

// newProgressRelay relays to out, under token, for the call of ctx.
func newProgressRelay(ctx context.Context, token mcp.ProgressToken, out func(params map[string]any)) *progressRelay {
	return &progressRelay{ctx: ctx, out: out, token: token, last: math.Inf(-1), limit: rate.NewLimiter(progressRate, progressBurst)}
}

// fn is the relay as the hub takes it.
func (r *progressRelay) fn() func(call.Progress) {
	if r == nil {
		return nil
	}
	return r.send
}

func (r *progressRelay) send(p Progress) {
	// Progress must increase (MCP spec), and notifications can overtake
	// each other: a stale one is dropped.
	r.mu.Lock()
	if p.Progress <= r.last {
		r.mu.Unlock()
		return
	}
	r.last = p.Progress
	now := time.Now()
	final := p.Total > 0 && p.Progress >= p.Total
	if !r.limit.AllowN(now, 1) && !final { // a final value goes out, token or not
		r.pending = &p
		r.mu.Unlock()
		return
	}
	r.pending, r.lastSent = nil, now
	r.mu.Unlock()
	r.notify(p)
}

func (r *progressRelay) notify(p Progress) {
	params := map[string]any{"progressToken": r.token, "progress": p.Progress}
	if p.Total > 0 {
		params["total"] = p.Total
	}
	if p.Message != "" {
		params["message"] = p.Message
	}
	r.out(params)
}

// progressSettle is how long a result waits after its call's last progress
// notification: mcp-go's streamable HTTP server (v1.2.1) can drop one
// queued just before the response is written.
const progressSettle = 15 * time.Millisecond

// settle sends what the rate limit held back, then waits until
// progressSettle has passed since the last notification, or ctx ends.
func (r *progressRelay) settle() {
	if r == nil {
		return
	}
	r.mu.Lock()
	if p := r.pending; p != nil { // the latest value, held back by the rate limit
		r.pending, r.lastSent = nil, time.Now()
		r.mu.Unlock()
		r.notify(*p)
		r.mu.Lock()
	}
	wait := progressSettle - time.Since(r.lastSent)
	sent := !r.lastSent.IsZero()
	r.mu.Unlock()
	if !sent || wait <= 0 {
		return
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
	case <-r.ctx.Done():
	}
}

// errorResult renders a failure as an isError tool result, with the kind
// and upstream in structuredContent for programs.
func errorResult(err error) *mcp.CallToolResult {
	detail := map[string]any{"kind": string(call.KindUpstreamError), "message": err.Error()}
	var ue *UpstreamError
	if errors.As(err, &ue) {
		detail["kind"] = string(ue.Kind)
		detail["tool"] = ue.Tool
		if ue.Upstream != "" {
			detail["upstream"] = ue.Upstream
		}
	}
	var rl *RateLimitError
	if errors.As(err, &rl) {
		detail["retry_after_ms"] = rl.RetryAfter.Milliseconds()
	}
	var qe *QuotaError
	if errors.As(err, &qe) {
		detail["quota"] = qe.Quota.String()
		if qe.RetryAfter > 0 {
			detail["retry_after_ms"] = qe.RetryAfter.Milliseconds()
		}
	}
	var blocked *BlockedResultError
	if errors.As(err, &blocked) {
		detail["findings"] = blocked.Findings
	}
	res := mcp.NewToolResultError(err.Error())
	res.StructuredContent = map[string]any{"error": detail}
	return res
}
