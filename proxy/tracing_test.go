package proxy

import (
	"context"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/mcp-router/mcp-router/internal/fakeupstream"
)

// otlpReceiver is an OTLP/HTTP trace endpoint: it decodes each export
// request (protobuf) and keeps its spans.
type otlpReceiver struct {
	mu    sync.Mutex
	spans []*tracepb.Span
}

func (o *otlpReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	var req coltracepb.ExportTraceServiceRequest
	if err == nil {
		err = proto.Unmarshal(body, &req)
	}
	if r.URL.Path != "/v1/traces" || err != nil {
		http.Error(w, "not an OTLP trace export", http.StatusBadRequest)
		return
	}
	o.mu.Lock()
	for _, rs := range req.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			o.spans = append(o.spans, ss.Spans...)
		}
	}
	o.mu.Unlock()
	out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.Write(out)
}

func (o *otlpReceiver) span(t *testing.T, name string) *tracepb.Span {
	t.Helper()
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, s := range o.spans {
		if s.Name == name {
			return s
		}
	}
	var names []string
	for _, s := range o.spans {
		names = append(names, s.Name)
	}
	t.Fatalf("no span %q among %q", name, names)
	return nil
}

// metaBuiltins serves the fake upstream plus a tool that answers with
// the traceparent its call carried in _meta.
func metaBuiltins(name string, _ []string) (*server.MCPServer, error) {
	s := fakeupstream.New(name)
	s.AddTool(mcp.NewTool("meta", mcp.WithDescription("Show the call's traceparent")),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			tp := ""
			if req.Params.Meta != nil {
				tp, _ = req.Params.Meta.AdditionalFields["traceparent"].(string)
			}
			return mcp.NewToolResultText(tp), nil
		})
	return s, nil
}

// A client's traceparent in _meta is continued: the gateway's span of the
// call is its child, the upstream call's span the gateway span's child,
// and the upstream gets that span's traceparent in _meta. A plan's step
// has a span of its own between the run_plan span and its upstream call.
// Spans reach an OTLP receiver through the OTLP/HTTP exporter.
func TestTracesContinueTheClientsTrace(t *testing.T) {
	recv := &otlpReceiver{}
	ts := httptest.NewServer(recv)
	defer ts.Close()
	exp, err := otlptracehttp.New(t.Context(), otlptracehttp.WithEndpointURL(ts.URL+"/v1/traces"))
	if err != nil {
		t.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	h := startHubWith(t, Options{Upstreams: []UpstreamConfig{builtinFake("alpha")}, Builtin: metaBuiltins, Tracing: tp})
	waitForTool(t, h, "alpha_meta")
	c := overHTTPWith(t, ServerOptions{Hub: h})

	const traceID, parentID = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	res, err := c.session.CallTool(t.Context(), &sdk.CallToolParams{Name: "alpha_meta",
		Meta: sdk.Meta{"traceparent": "00-" + traceID + "-" + parentID + "-01"}})
	if err != nil {
		t.Fatal(err)
	}
	upstreamSaw := resultText(res)
	plan := c.call(t, "run_plan", map[string]any{"steps": []any{map[string]any{"id": "s1", "tool": "alpha_meta"}}})
	if plan.IsError {
		t.Fatalf("run_plan: %s", resultText(plan))
	}
	if err := tp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}

	call := recv.span(t, "tools/call alpha_meta")
	if got := hex.EncodeToString(call.TraceId); got != traceID {
		t.Errorf("the call's span is in trace %s, want the client's %s", got, traceID)
	}
	if got := hex.EncodeToString(call.ParentSpanId); got != parentID {
		t.Errorf("the call's span has parent %s, want the client's span %s", got, parentID)
	}
	var up, stepUp *tracepb.Span
	recv.mu.Lock()
	for _, s := range recv.spans {
		if s.Name == "upstream alpha alpha_meta" {
			if hex.EncodeToString(s.TraceId) == traceID {
				up = s
			} else {
				stepUp = s
			}
		}
	}
	recv.mu.Unlock()
	if up == nil || stepUp == nil {
		t.Fatalf("want two upstream spans, one in the client's trace")
	}
	if string(up.ParentSpanId) != string(call.SpanId) || up.Kind != tracepb.Span_SPAN_KIND_CLIENT {
		t.Errorf("the upstream span's parent %x (kind %v), want the call's span %x (client)", up.ParentSpanId, up.Kind, call.SpanId)
	}
	if want := "00-" + traceID + "-" + hex.EncodeToString(up.SpanId) + "-01"; upstreamSaw != want {
		t.Errorf("the upstream got traceparent %q, want %q", upstreamSaw, want)
	}
	runPlan, step := recv.span(t, "tools/call run_plan"), recv.span(t, "plan step s1")
	if string(step.ParentSpanId) != string(runPlan.SpanId) || string(stepUp.ParentSpanId) != string(step.SpanId) {
		t.Errorf("plan spans: step's parent %x (want run_plan %x), upstream's parent %x (want step %x)",
			step.ParentSpanId, runPlan.SpanId, stepUp.ParentSpanId, step.SpanId)
	}
	if !strings.Contains(resultText(plan), "00-"+hex.EncodeToString(stepUp.TraceId)+"-"+hex.EncodeToString(stepUp.SpanId)) {
		t.Errorf("the plan's upstream call got %q, want its span's traceparent", resultText(plan))
	}
}
