package call

import (
	"context"
	"maps"
	"slices"

	"github.com/mark3labs/mcp-go/mcp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcp-router/mcp-router/proxy/integrity"
)

// Trace is the stage that records the client span of an upstream request,
// under a span of its plan step for a plan's call; InjectTrace hands the
// context on in _meta. A nil tracer records nothing.
func Trace[R any](tr trace.Tracer) StageOf[R] {
	return func(ctx context.Context, c *Call, next HandlerOf[R]) (R, error) {
		if tr == nil {
			return next(ctx, c)
		}
		var step trace.Span
		if c.Plan != "" || c.Step != "" {
			ctx, step = tr.Start(ctx, "plan step "+c.Step, trace.WithAttributes(
				attribute.String("mcp.plan", c.Plan), attribute.String("mcp.step", c.Step)))
		}
		name, what := spanName(c)
		ctx, span := tr.Start(ctx, name, trace.WithSpanKind(trace.SpanKindClient),
			trace.WithAttributes(attribute.String("mcp.upstream", c.Upstream), what))
		res, err := next(ctx, c)
		tool, _ := any(res).(*mcp.CallToolResult) // reads have no isError
		EndSpan(span, tool, err)
		span.End()
		if step != nil {
			EndSpan(step, tool, err)
			step.End()
		}
		return res, err
	}
}

// spanName is the name of c's span and the attribute that names what it
// asks for (a resource URI stays out of the name, and its secrets out of
// the attribute).
func spanName(c *Call) (string, attribute.KeyValue) {
	switch c.Method {
	case mcp.MethodResourcesRead:
		return "upstream " + c.Upstream + " resources/read", attribute.String("mcp.resource.uri", integrity.RedactSecrets(c.Tool))
	case mcp.MethodPromptsGet:
		return "upstream " + c.Upstream + " prompts/get " + c.Tool, attribute.String("mcp.prompt", c.Tool)
	}
	return "upstream " + c.Upstream + " " + c.Tool, attribute.String("mcp.tool", c.Tool)
}

// EndSpan sets a span's status from its outcome, secrets redacted.
func EndSpan(span trace.Span, res *mcp.CallToolResult, err error) {
	switch {
	case err != nil:
		span.SetStatus(codes.Error, integrity.RedactSecrets(err.Error()))
	case res != nil && res.IsError:
		span.SetStatus(codes.Error, "the tool answered isError")
	}
}

// traceContext is W3C trace context, which MCP carries in _meta.
var traceContext = propagation.TraceContext{}

// InjectTrace writes ctx's trace context into meta (a new one if nil);
// without a span it returns meta as it is.
func InjectTrace(ctx context.Context, meta *mcp.Meta) *mcp.Meta {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return meta
	}
	if meta == nil {
		meta = &mcp.Meta{}
	}
	if meta.AdditionalFields == nil {
		meta.AdditionalFields = map[string]any{}
	}
	traceContext.Inject(ctx, metaCarrier(meta.AdditionalFields))
	return meta
}

// ExtractTrace continues the trace a client put in meta.
func ExtractTrace(ctx context.Context, meta *mcp.Meta) context.Context {
	if meta == nil || meta.AdditionalFields == nil {
		return ctx
	}
	return traceContext.Extract(ctx, metaCarrier(meta.AdditionalFields))
}

// metaCarrier lets the propagator read and write _meta's string fields.
type metaCarrier map[string]any

func (m metaCarrier) Get(key string) string {
	s, _ := m[key].(string)
	return s
}

func (m metaCarrier) Set(key, value string) { m[key] = value }

func (m metaCarrier) Keys() []string { return slices.Collect(maps.Keys(m)) }
