package proxy

// The pipeline of a tools/call, in the order written once in (*Hub).stages,
// and that of a resources/read or a prompts/get, in readStages.

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/mcp-router/mcp-router/proxy/apps"
	"github.com/mcp-router/mcp-router/proxy/call"
	"github.com/mcp-router/mcp-router/proxy/frontdoor"
	"github.com/mcp-router/mcp-router/proxy/internal/upstream"
)

// namedStage is a stage under the name the order test prints.
type namedStage[R any] struct {
	name string
	run  call.StageOf[R]
}

// stages is the order of a call's pipeline, the first outermost. The cap
// is outermost so that audit and metrics see a result's true size, and it
// keeps the result as screened. The person is asked last of the checks, so
// that a refused, malformed or over-quota call never asks, and the quotas
// bound how often a model may ask.
func (h *Hub) stages() []namedStage[*mcp.CallToolResult] {
	return []namedStage[*mcp.CallToolResult]{
		{"cap", call.Cap(h.opts.ModelResultBytes, h.results)},          // what of a long result reaches the model; the whole kept (call/capresult.go)
		{"audit", call.Audit(h.opts.Audit, h.observeCall)},             // metrics and the audit record of every call, refused ones too (call/audit.go)
		{"authorise", call.Authorise[*mcp.CallToolResult](h.heldBack)}, // blocked and app-only tools (vet.go, catalog.go)
		{"start-wait", call.StartWait[*mcp.CallToolResult](h.resolve)}, // waits for an upstream that is starting; resolves the owner (startup.go)
		{"argcheck", h.args.Stage},                                     // the arguments against the tool's input schema (call/argcheck.go)
		{"quota", h.limits.Stage},                                      // the repeat bound and the quotas (call/quota.go)
		{"approve", h.gate.Stage},                                      // a person approves a gated call (approval/gate.go)
		{"integrity", call.Screen(screenerOf(h, h.screenToolResult))},  // result integrity and secret scrubbing (resultscan.go)
		{"tracing", call.Trace[*mcp.CallToolResult](h.callTracer())},   // the span of the upstream call and its plan step (call/trace.go)
	}
}

// readStages is the pipeline of a resources/read or a prompts/get, the
// first outermost: the stages of a call that apply to a read, in the same
// order. screen is the integrity screen of its result type.
func readStages[R any](h *Hub, screen func(UpstreamConfig, *upstream.Scrubber, string, R) (R, error)) []namedStage[R] {
	return []namedStage[R]{
		{"authorise", call.Authorise[R](h.offered)},       // what the catalog does not offer (pipeline.go)
		{"start-wait", call.StartWait[R](h.resolveRead)},  // waits for an upstream that is starting (pipeline.go)
		{"integrity", call.Screen(screenerOf(h, screen))}, // result integrity and secret scrubbing (resultscan.go)
		{"tracing", call.Trace[R](h.callTracer())},        // the span of the upstream request (call/trace.go)
	}
}

// chain is the stages ss in front of last.
func chain[R any](last call.HandlerOf[R], ss []namedStage[R]) call.HandlerOf[R] {
	runs := make([]call.StageOf[R], len(ss))
	for i, s := range ss {
		runs[i] = s.run
	}
	return call.Chain(last, runs...)
}

const tracerName = "github.com/mcp-router/mcp-router/proxy"

// tracer is Options.Tracing's tracer, or one that records nothing.
func (h *Hub) tracer() trace.Tracer {
	if h.opts.Tracing == nil {
		return noop.NewTracerProvider().Tracer(tracerName)
	}
	return h.opts.Tracing.Tracer(tracerName)
}

// callTracer is the tracing stage's tracer: nil when the hub does not trace.
func (h *Hub) callTracer() trace.Tracer {
	if h.opts.Tracing == nil {
		return nil
	}
	return h.tracer()
}

// CallTool calls a catalog tool by exposed name for a caller in process
// (a plan step, `mcp-router call`), through the whole pipeline.
func (h *Hub) CallTool(ctx context.Context, name string, args any, onProgress ProgressFunc) (*mcp.CallToolResult, error) {
	c := call.New(ctx, name, args)
	c.Whole = true // a plan step or the CLI: not a model's context
	c.Progress = onProgress
	return h.Call(ctx, c)
}

// Call passes c through the pipeline to its tool's upstream; a failure is
// an *UpstreamError.
func (h *Hub) Call(ctx context.Context, c *call.Call) (*mcp.CallToolResult, error) {
	return h.callPipe(ctx, c)
}

// approvalTool is what the approval gate needs of a catalog tool.
func (h *Hub) approvalTool(name string) (string, bool, bool) {
	t, ok := h.Catalog().Tool(name)
	return t.Upstream, t.Destructive, ok
}

// elicit asks the client of ctx's call for input.
func (h *Hub) elicit(ctx context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	r := h.relayTo()
	if r == nil {
		return nil, errors.New("no client to ask")
	}
	return r.Elicit(ctx, req)
}

// heldBack says why a tool the catalog holds back (blocked, or for an app
// only) may not be called.
func (h *Hub) heldBack(c *call.Call) error {
	tool := c.Tool
	if _, ok := h.Catalog().Tool(tool); ok {
		return nil
	}
	if up, why, blocked := h.blockedTool(tool); blocked {
		return &UpstreamError{Kind: call.KindBlocked, Upstream: up, Tool: tool, Err: fmt.Errorf("blocked: %s", why)}
	}
	if a, ok := h.Catalog().appOnlyTool(tool); ok {
		return &UpstreamError{Kind: call.KindBlocked, Upstream: a.Upstream, Tool: tool, Err: ErrAppOnly}
	}
	return nil
}

// target is the catalog tool of c and its upstream, which an edit may
// have removed since startWait resolved them.
func (h *Hub) target(c *call.Call) (Tool, *upstream.Upstream, error) {
	t, ok := h.Catalog().Tool(c.Tool)
	u := h.set().byName[c.Upstream]
	if !ok || u == nil || t.Upstream != c.Upstream {
		return Tool{}, nil, removed(c)
	}
	return t, u, nil
}

// removed is the failure of a call whose upstream an edit removed.
func removed(c *call.Call) error {
	return &UpstreamError{Kind: call.KindUnknownTool, Upstream: c.Upstream, Tool: c.Tool,
		Err: fmt.Errorf("%w: its server %s was removed from the configuration", ErrUnknownTool, c.Upstream)}
}

// screenerOf is the integrity stage's screener: the screen of c's
// upstream, taken before the request goes on, so that an edit meanwhile
// does not change the rules a result is screened by.
func screenerOf[R any](h *Hub, screen func(UpstreamConfig, *upstream.Scrubber, string, R) (R, error)) func(*call.Call) (func(R) (R, error), error) {
	return func(c *call.Call) (func(R) (R, error), error) {
		u := h.set().byName[c.Upstream]
		if u == nil {
			return nil, removed(c)
		}
		return func(res R) (R, error) { return screen(u.Config(), u.Scrubber(), c.Tool, res) }, nil
	}
}

// upstreamCall is the end of the pipeline: the call of the tool on its
// upstream, with the caller's progress and trace context.
func (h *Hub) upstreamCall(ctx context.Context, c *call.Call) (*mcp.CallToolResult, error) {
	t, u, err := h.target(c)
	if err != nil {
		return nil, err
	}
	req := mcp.CallToolRequest{}
	req.Params.Name = t.Original
	req.Params.Arguments = c.Args
	if c.Progress != nil {
		token, release := h.progress.Register(c.Upstream, c.Progress)
		defer release()
		req.Params.Meta = &mcp.Meta{ProgressToken: token}
	}
	if h.opts.Tracing != nil {
		req.Params.Meta = call.InjectTrace(ctx, req.Params.Meta)
	}
	callCtx, done := u.WithCaller(ctx)
	res, err := u.CallTool(callCtx, req)
	done()
	if err != nil {
		return nil, &UpstreamError{Kind: classify(ctx, err), Upstream: t.Upstream, Tool: c.Tool,
			Err: h.errorText(u.Config(), u.Scrubber(), c.Tool, callErr(c, err, u.Config()))}
	}
	return res, nil
}

func (h *Hub) observeCall(c *call.Call, took time.Duration, res *mcp.CallToolResult, err error) {
	h.opts.Metrics.observeCall(c.Upstream, c.Tool, took, res, err)
}

// LocalPrincipal is the principal of calls that carry no bearer token:
// over stdio, and over HTTP when no tokens are configured.
const LocalPrincipal = frontdoor.LocalPrincipal

func sessionTagOf(ctx context.Context) string { return call.SessionTag(call.SessionOf(ctx)) }

// principalName is who ctx's caller is, or LocalPrincipal.
func principalName(ctx context.Context) string { return cmp.Or(PrincipalOf(ctx), LocalPrincipal) }

// PrincipalOf is who the call in ctx came from (its bearer token's
// fingerprint), or "" for a call with none.
func PrincipalOf(ctx context.Context) string { return call.PrincipalOf(ctx) }

// argSchemas gives the argument check the schemas of the hub's catalog.
type argSchemas struct{ h *Hub }

func (s argSchemas) InputSchema(c *call.Call) (json.RawMessage, call.Catalog) {
	cat := s.h.Catalog()
	if t, u, err := s.h.target(c); err == nil && u.Config().ValidateArguments {
		return t.Def.RawInputSchema, cat
	}
	return nil, cat
}

// ReadResource reads a resource from the upstream that offers it, through
// readStages.
func (h *Hub) ReadResource(ctx context.Context, upstreamName string, req mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	c := call.New(ctx, req.Params.URI, req.Params)
	c.Method, c.Upstream = mcp.MethodResourcesRead, upstreamName
	return h.readPipe(ctx, c)
}

// GetPrompt gets a prompt by exposed name, through readStages.
func (h *Hub) GetPrompt(ctx context.Context, name string, args map[string]string) (*mcp.GetPromptResult, error) {
	c := call.New(ctx, name, args)
	c.Method = mcp.MethodPromptsGet
	return h.getPipe(ctx, c)
}

// offered says why a read asks for what the catalog does not offer; it
// resolves a prompt to its upstream.
func (h *Hub) offered(c *call.Call) error {
	cat := h.Catalog() // one catalog for the whole answer, though a rebuild lands meanwhile
	if p, ok := cat.Prompt(c.Tool); ok && c.Method == mcp.MethodPromptsGet {
		c.Upstream = p.Upstream
	}
	if c.Method == mcp.MethodResourcesRead {
		if ups := cat.uriOwners(c.Tool); len(ups) > 1 {
			return fmt.Errorf("resource %q is offered by several servers (%s): none is asked", c.Tool, strings.Join(ups, ", "))
		}
		if cat.quarantined[c.Tool] {
			return fmt.Errorf("resource %q is quarantined: its listing failed the poisoning scan", c.Tool)
		}
	}
	switch {
	case h.set().byName[c.Upstream] != nil:
		return nil
	case c.Method == mcp.MethodPromptsGet:
		return fmt.Errorf("unknown prompt %q", c.Tool)
	}
	return fmt.Errorf("unknown upstream %q", c.Upstream)
}

// resolveRead is the start-wait of a read: it waits up to StartWait for
// the read's upstream when it is still starting.
func (h *Hub) resolveRead(ctx context.Context, c *call.Call) error {
	if err := h.closing(c); err != nil {
		return err
	}
	if u := h.set().byName[c.Upstream]; u != nil && u.Starting() {
		h.awaitFirst(ctx, []*upstream.Upstream{u}, time.Now().Add(h.opts.StartWait))
	}
	return nil
}

// readUpstream is the end of a resource read's pipeline: the upstream is
// asked for its own URI, and its contents come back under the catalog's.
func (h *Hub) readUpstream(ctx context.Context, c *call.Call) (*mcp.ReadResourceResult, error) {
	req := mcp.ReadResourceRequest{}
	req.Params, _ = c.Args.(mcp.ReadResourceParams)
	req.Params.URI = apps.Original(c.Upstream, c.Tool)
	return onUpstream(ctx, h, c, "reading", func(ctx context.Context, cl *client.Client) (*mcp.ReadResourceResult, error) {
		req.Params.Meta = call.InjectTrace(ctx, nil) // none of the client's: its era, its tokens
		res, err := cl.ReadResource(ctx, req)
		if err == nil && res != nil {
			res.Contents = apps.Contents(c.Upstream, res.Contents)
		}
		return res, err
	})
}

// getUpstream is the end of a prompt get's pipeline.
func (h *Hub) getUpstream(ctx context.Context, c *call.Call) (*mcp.GetPromptResult, error) {
	p, ok := h.Catalog().Prompt(c.Tool)
	if !ok || p.Upstream != c.Upstream {
		return nil, removed(c)
	}
	req := mcp.GetPromptRequest{}
	req.Params.Name = p.Original
	req.Params.Arguments, _ = c.Args.(map[string]string)
	return onUpstream(ctx, h, c, "getting prompt", func(ctx context.Context, cl *client.Client) (*mcp.GetPromptResult, error) {
		req.Params.Meta = call.InjectTrace(ctx, req.Params.Meta)
		return cl.GetPrompt(ctx, req)
	})
}

// onUpstream reads c from its upstream's live connection, within its call
// timeout, with what the upstream asks meanwhile going to this client.
func onUpstream[R any](ctx context.Context, h *Hub, c *call.Call, doing string, read func(context.Context, *client.Client) (R, error)) (R, error) {
	var none R
	u := h.set().byName[c.Upstream]
	if u == nil {
		return none, removed(c)
	}
	conn, err := u.Current()
	if err != nil {
		return none, fmt.Errorf("%s %s from %s: %w", doing, c.Tool, c.Upstream, err)
	}
	ctx, cancel := context.WithTimeout(ctx, u.Config().EffectiveCallTimeout())
	defer cancel()
	ctx, done := u.WithCaller(ctx)
	defer done()
	res, err := read(ctx, conn.Client())
	if err != nil {
		return none, h.errorText(u.Config(), u.Scrubber(), c.Tool, err)
	}
	return res, nil
}
