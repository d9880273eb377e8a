package proxy

import (
	"context"

	"github.com/mark3labs/mcp-go/mcp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/mcp-router/mcp-router/proxy/call"
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

// traceCall is the stage that records the client span of a call to its
// upstream (under the plan step's span for a plan step) and hands its
// trace context on in the request's _meta (injectTrace).
func (h *Hub) traceCall(ctx context.Context, c *call.Call, next call.Handler) (*mcp.CallToolResult, error) {
	if h.opts.Tracing == nil {
		return next(ctx, c) // nothing to record: no names, attributes or context to build
	}
	tr := h.tracer()
	var step trace.Span
	if c.Plan != "" || c.Step != "" {
		ctx, step = tr.Start(ctx, "plan step "+c.Step, trace.WithAttributes(
			attribute.String("mcp.plan", c.Plan), attribute.String("mcp.step", c.Step)))
	}
	ctx, span := tr.Start(ctx, "upstream "+c.Upstream+" "+c.Tool, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attribute.String("mcp.upstream", c.Upstream), attribute.String("mcp.tool", c.Tool)))
	res, err := next(ctx, c)
	endSpan(span, res, err)
	span.End()
	if step != nil {
		endSpan(step, res, err)
		step.End()
	}
	return res, err
}

// injectTrace writes the trace context of ctx's span into req's _meta.
func (h *Hub) injectTrace(ctx context.Context, req *mcp.CallToolRequest) {
	if h.opts.Tracing == nil || !trace.SpanContextFromContext(ctx).IsValid() {
		return
	}
	if req.Params.Meta == nil {
		req.Params.Meta = &mcp.Meta{}
	}
	if req.Params.Meta.AdditionalFields == nil {
		req.Params.Meta.AdditionalFields = map[string]any{}
	}
	traceContext.Inject(ctx, metaCarrier(req.Params.Meta.AdditionalFields))
}

func endSpan(span trace.Span, res *mcp.CallToolResult, err error) {
	switch {
	case err != nil:
		span.SetStatus(codes.Error, integrity.RedactSecrets(err.Error()))
	case res != nil && res.IsError:
		span.SetStatus(codes.Error, "the tool answered isError")
	}
}
