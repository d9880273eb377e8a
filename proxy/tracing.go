package proxy

import (
	"context"
	"errors"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	mcptracing "github.com/mark3labs/mcp-go/tracing"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/mcp-router/mcp-router/proxy/call"
	"github.com/mcp-router/mcp-router/proxy/integrity"
	"github.com/mcp-router/mcp-router/routing"
)

// traceCalls gives each tools/call a server span, continuing the client's
// trace from _meta, if any.
func (s *Server) traceCalls(next server.ToolHandlerFunc) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		ctx = call.ExtractTrace(ctx, req.Params.Meta)
		name := call.ClipName(req.Params.Name)
		ctx, span := s.hub.tracer().Start(ctx, "tools/call "+name, trace.WithSpanKind(trace.SpanKindServer),
			trace.WithAttributes(attribute.String("mcp.tool", name), attribute.String("mcp.session", sessionTagOf(ctx)),
				attribute.String("mcp.principal", principalName(ctx))))
		defer span.End()
		res, err := next(ctx, req)
		call.EndSpan(span, res, err)
		return res, err
	}
}

// requestTracer makes mcp-go's span of each request an OpenTelemetry
// server span named for its method, parent of the routing and upstream
// spans; tools/call has its own span (traceCalls).
type requestTracer struct{ tr trace.Tracer }

func (t requestTracer) Start(ctx context.Context, name string, kind mcptracing.SpanKind, attrs ...mcptracing.Attribute) (context.Context, mcptracing.Span) {
	method, ok := strings.CutPrefix(name, "mcp.")
	if !ok || kind != mcptracing.SpanKindServer || method == string(mcp.MethodToolsCall) {
		return mcptracing.NoopTracer().Start(ctx, name, kind)
	}
	if !spanMethods[mcp.MCPMethod(method)] {
		method = "unknown method" // the client chose it: one name for all such, its value clipped below
	}
	kv := make([]attribute.KeyValue, 0, len(attrs)+2)
	for _, a := range attrs {
		if a.Key != "mcp.session.id" { // mcp.session below, as the tools/call spans have it
			kv = append(kv, attribute.String(a.Key, call.ClipName(a.Value)))
		}
	}
	kv = append(kv, attribute.String("mcp.session", sessionTagOf(ctx)), attribute.String("mcp.principal", principalName(ctx)))
	ctx, span := t.tr.Start(ctx, method, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(kv...))
	return ctx, requestSpan{span}
}

// spanMethods are the requests that name their spans; any other method's
// span is "unknown method", so that clients cannot make names unbounded.
var spanMethods = map[mcp.MCPMethod]bool{
	mcp.MethodInitialize: true, mcp.MethodPing: true, mcp.MethodServerDiscover: true,
	mcp.MethodToolsList: true, mcp.MethodPromptsList: true, mcp.MethodPromptsGet: true,
	mcp.MethodResourcesList: true, mcp.MethodResourcesTemplatesList: true, mcp.MethodResourcesRead: true,
	mcp.MethodResourcesSubscribe: true, mcp.MethodResourcesUnsubscribe: true, mcp.MethodSubscriptionsListen: true,
	mcp.MethodSetLogLevel: true, mcp.MethodCompletionComplete: true,
	mcp.MethodTasksGet: true, mcp.MethodTasksList: true, mcp.MethodTasksResult: true, mcp.MethodTasksCancel: true,
}

// requestSpan is an OpenTelemetry span seen through mcp-go's interface.
type requestSpan struct{ span trace.Span }

func (s requestSpan) SetAttributes(attrs ...mcptracing.Attribute) {
	for _, a := range attrs {
		if a.Key != "mcp.session.id" {
			s.span.SetAttributes(attribute.String(a.Key, integrity.RedactSecrets(a.Value)))
		}
	}
}

// RecordError records err's text, redacted, never err itself.
func (s requestSpan) RecordError(err error) {
	s.span.RecordError(errors.New(integrity.RedactSecrets(err.Error())))
}

func (s requestSpan) SetStatus(code mcptracing.StatusCode, description string) {
	switch code {
	case mcptracing.StatusError:
		s.span.SetStatus(codes.Error, integrity.RedactSecrets(description))
	case mcptracing.StatusOK:
		s.span.SetStatus(codes.Ok, "")
	}
}

func (s requestSpan) End() { s.span.End() }

// metaPropagator continues the trace whose traceparent the client put in
// a request's _meta.
type metaPropagator struct{}

func (metaPropagator) ExtractMeta(ctx context.Context, meta *mcp.Meta) context.Context {
	return call.ExtractTrace(ctx, meta)
}

func (metaPropagator) InjectMeta(ctx context.Context, meta *mcp.Meta) *mcp.Meta {
	return call.InjectTrace(ctx, meta)
}

// traceRequests gives every request a span when the hub traces.
func (s *Server) traceRequests() []server.ServerOption {
	if s.hub.opts.Tracing == nil {
		return nil
	}
	return []server.ServerOption{server.WithTracer(requestTracer{s.hub.tracer()}), server.WithMetaPropagator(metaPropagator{})}
}

// Names of the spans of routing decisions.
const (
	routeSpanList     = "route tools/list" // a tools/list carrying the user's message
	routeSpanDiscover = "route " + requestMoreToolsName
	routeSpanPlan     = "route plan" // the candidates handed to the planner
)

// startRouteSpan starts the span of a routing decision, allocating nothing
// without tracing.
func (s *Server) startRouteSpan(ctx context.Context, name string) (context.Context, trace.Span) {
	if s.hub.opts.Tracing == nil {
		return ctx, noop.Span{}
	}
	return s.hub.tracer().Start(ctx, name)
}

// endRouteSpan ends a routing decision's span with what was decided. The
// query, keywords and arguments never go on a span: they may hold secrets,
// and traces are read by more people, and kept longer, than the audit.
func endRouteSpan(span trace.Span, d routing.Decision) {
	if span.IsRecording() {
		attrs := make([]attribute.KeyValue, 0, 6)
		attrs = append(attrs, attribute.Int("mcp.route.candidates", len(d.Ranked)),
			attribute.Int("mcp.route.selected", len(d.Selected)), attribute.Bool("mcp.route.abstained", d.Abstained))
		if len(d.Ranked) > 0 {
			attrs = append(attrs, attribute.String("mcp.route.top_tool", call.ClipName(d.Ranked[0].Name)),
				attribute.Float64("mcp.route.top_score", d.Ranked[0].Score))
		}
		if len(d.Alerts) > 0 {
			attrs = append(attrs, attribute.StringSlice("mcp.route.alerts", alertKinds(d.Alerts)))
		}
		span.SetAttributes(attrs...)
	}
	span.End()
}

// endDiscoverySpan ends the span of a request_more_tools discovery; err is
// the discovery's.
func endDiscoverySpan(span trace.Span, d routing.Discovery, err error) {
	if span.IsRecording() {
		span.SetAttributes(attribute.Int("mcp.route.added", len(d.Added)), attribute.Int("mcp.route.evicted", len(d.Evicted)),
			attribute.Bool("mcp.route.breaker_open", d.Breaker.Open))
		if err != nil {
			span.SetStatus(codes.Error, integrity.RedactSecrets(err.Error()))
		}
	}
	endRouteSpan(span, d.Decision)
}
