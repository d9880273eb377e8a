package proxy

import (
	"context"

	"github.com/mark3labs/mcp-go/mcp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/mcp-router/mcp-router/executor"
	"github.com/mcp-router/mcp-router/proxy/integrity"
)

// tracerName names the spans' instrumentation scope.
const tracerName = "github.com/mcp-router/mcp-router/proxy"

// traceContext reads and writes W3C trace context (traceparent,
// tracestate), which MCP carries in a request's _meta.
var traceContext = propagation.TraceContext{}

// tracer is the hub's tracer: Options.Tracing's, or one that records
// nothing.
func (h *Hub) tracer() trace.Tracer {
	if h.opts.Tracing == nil {
		return noop.NewTracerProvider().Tracer(tracerName)
	}
	return h.opts.Tracing.Tracer(tracerName)
}

// metaCarrier lets the propagator read and write _meta's string fields.
type metaCarrier map[string]any

func (m metaCarrier) Get(key string) string {
	s, _ := m[key].(string)
	return s
}

func (m metaCarrier) Set(key, value string) { m[key] = value }

func (m metaCarrier) Keys() []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	return keys
}

func (h *Hub) startUpstreamSpan(ctx context.Context, upstream, tool string, req *mcp.CallToolRequest) (context.Context, trace.Span) {
	if h.opts.Tracing == nil {
		return ctx, noop.Span{} // nothing to record: no names, attributes or context to build
	}
	tr := h.tracer()
	if plan, step, ok := executor.StepOf(ctx); ok {
		var stepSpan trace.Span
		ctx, stepSpan = tr.Start(ctx, "plan step "+step, trace.WithAttributes(
			attribute.String("mcp.plan", plan), attribute.String("mcp.step", step)))
		ctx = context.WithValue(ctx, stepSpanKey{}, stepSpan)
	}
	ctx, span := tr.Start(ctx, "upstream "+upstream+" "+tool, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attribute.String("mcp.upstream", upstream), attribute.String("mcp.tool", tool)))
	if span.SpanContext().IsValid() {
		if req.Params.Meta == nil {
			req.Params.Meta = &mcp.Meta{}
		}
		if req.Params.Meta.AdditionalFields == nil {
			req.Params.Meta.AdditionalFields = map[string]any{}
		}
		traceContext.Inject(ctx, metaCarrier(req.Params.Meta.AdditionalFields))
	}
	return ctx, span
}

type stepSpanKey struct{}

// endUpstreamSpan ends a call's span, and its plan step's.
func endUpstreamSpan(ctx context.Context, span trace.Span, res *mcp.CallToolResult, err error) {
	endSpan(span, res, err)
	span.End()
	if step, ok := ctx.Value(stepSpanKey{}).(trace.Span); ok {
		endSpan(step, res, err)
		step.End()
	}
}

func endSpan(span trace.Span, res *mcp.CallToolResult, err error) {
	switch {
	case err != nil:
		span.SetStatus(codes.Error, integrity.RedactSecrets(err.Error()))
	case res != nil && res.IsError:
		span.SetStatus(codes.Error, "the tool answered isError")
	}
}
