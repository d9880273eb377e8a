package proxy

// The pipeline of a tools/call: the stages a call passes through on its way
// to its upstream, in the order written once in (*Hub).stages.

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/mcp-router/mcp-router/proxy/call"
	"github.com/mcp-router/mcp-router/proxy/frontdoor"
	"github.com/mcp-router/mcp-router/proxy/internal/upstream"
)

// namedStage is a stage of the pipeline under the name the order test
// prints.
type namedStage struct {
	name string
	run  call.Stage
}

// stages is the order of a call's pipeline, the first outermost. A new
// concern is one more stage here.
func (h *Hub) stages() []namedStage {
	return []namedStage{
		{"audit", call.Audit(h.opts.Audit, h.observeCall)}, // metrics and the audit record of every call, refused ones too (call/audit.go)
		{"authorise", call.Authorise(h.heldBack)},          // blocked and app-only tools (vet.go, catalog.go)
		{"start-wait", call.StartWait(h.resolve)},          // waits for an upstream that is starting; resolves the owner (startup.go)
		{"argcheck", h.args.Stage},                         // the arguments against the tool's input schema (call/argcheck.go)
		{"quota", h.limits.Stage},                          // the repeat bound and the quotas (call/quota.go)
		{"integrity", call.Screen(h.screener)},             // result integrity and secret scrubbing (resultscan.go)
		{"tracing", call.Trace(h.callTracer())},            // the span of the upstream call and its plan step (call/trace.go)
	}
}

// tracerName names the spans' instrumentation scope.
const tracerName = "github.com/mcp-router/mcp-router/proxy"

// tracer is the hub's tracer: Options.Tracing's, or one that records
// nothing.
func (h *Hub) tracer() trace.Tracer {
	if h.opts.Tracing == nil {
		return noop.NewTracerProvider().Tracer(tracerName)
	}
	return h.opts.Tracing.Tracer(tracerName)
}

// callTracer is the tracer of the tracing stage: nil when the hub does not
// trace.
func (h *Hub) callTracer() trace.Tracer {
	if h.opts.Tracing == nil {
		return nil
	}
	return h.tracer()
}

// pipeline is the hub's stages in front of the upstream call.
func (h *Hub) pipeline() call.Handler {
	ss := h.stages()
	runs := make([]call.Stage, len(ss))
	for i, s := range ss {
		runs[i] = s.run
	}
	return call.Chain(h.upstreamCall, runs...)
}

// CallTool calls a catalog tool by exposed name for a caller in process
// (a plan step, `mcp-router call`): it is the edge for calls that come
// with a context only, and runs the whole pipeline as Call does.
func (h *Hub) CallTool(ctx context.Context, name string, args any, onProgress ProgressFunc) (*mcp.CallToolResult, error) {
	c := call.New(ctx, name, args)
	if onProgress != nil {
		c.Progress = func(p call.Progress) { onProgress(Progress(p)) }
	}
	return h.Call(ctx, c)
}

// Call passes c through the pipeline to its tool's upstream. A failure is
// an *UpstreamError that says which stage refused the call, or what the
// upstream answered.
func (h *Hub) Call(ctx context.Context, c *call.Call) (*mcp.CallToolResult, error) {
	return h.callPipe(ctx, c)
}

// heldBack says why a tool that the catalog holds back may not be called:
// blocked by vetting, or meant for an app only.
func (h *Hub) heldBack(tool string) error {
	if _, ok := h.Catalog().Tool(tool); ok {
		return nil
	}
	if up, why, blocked := h.blockedTool(tool); blocked {
		return &UpstreamError{Kind: KindBlocked, Upstream: up, Tool: tool, Err: fmt.Errorf("blocked: %s", why)}
	}
	if a, ok := h.Catalog().appOnlyTool(tool); ok {
		return &UpstreamError{Kind: KindBlocked, Upstream: a.Upstream, Tool: tool, Err: ErrAppOnly}
	}
	return nil
}

// target is the catalog tool of c and its upstream, as resolved by
// startWait; an edit may have removed either since.
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
	return &UpstreamError{Kind: KindUnknownTool, Upstream: c.Upstream, Tool: c.Tool,
		Err: fmt.Errorf("%w: its server %s was removed from the configuration", ErrUnknownTool, c.Upstream)}
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
		token, release := h.progress.Register(c.Upstream, func(p Progress) { c.Progress(call.Progress(p)) })
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

// observeCall counts a call in the hub's metrics.
func (h *Hub) observeCall(c *call.Call, took time.Duration, res *mcp.CallToolResult, err error) {
	h.opts.Metrics.observeCall(c.Upstream, c.Tool, took, res, err)
}

// LocalPrincipal is the principal of calls that carry no bearer token:
// over stdio, and over HTTP when no tokens are configured.
const LocalPrincipal = frontdoor.LocalPrincipal

// sessionTagOf is the SessionTag of ctx's session.
func sessionTagOf(ctx context.Context) string { return call.SessionTag(sessionID(ctx)) }

// sessionID is the client session of ctx; over stdio there is one.
func sessionID(ctx context.Context) string { return call.SessionOf(ctx) }

// principalName is who ctx's caller is: the principal the front door
// found (its bearer token's fingerprint), or LocalPrincipal.
func principalName(ctx context.Context) string { return cmp.Or(PrincipalOf(ctx), LocalPrincipal) }

// PrincipalOf is who the call in ctx came from, as audit records and
// quotas name it (the fingerprint of its bearer token), or "" for a call
// with none (stdio, or HTTP without tokens).
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
