package proxy

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	mcptracing "github.com/mark3labs/mcp-go/tracing"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/mcp-router/mcp-router/internal/fakeollama"
	"github.com/mcp-router/mcp-router/internal/fakeupstream"
	"github.com/mcp-router/mcp-router/proxy/call"
	"github.com/mcp-router/mcp-router/routing"
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

// tracedHub starts a hub whose spans go through the OTLP/HTTP exporter to
// recv, and how to flush them there.
func tracedHub(t *testing.T, recv *otlpReceiver) (*Hub, func()) {
	t.Helper()
	ts := httptest.NewServer(recv)
	t.Cleanup(ts.Close)
	exp, err := otlptracehttp.New(t.Context(), otlptracehttp.WithEndpointURL(ts.URL+"/v1/traces"))
	if err != nil {
		t.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	h := startHubWith(t, Options{Upstreams: []UpstreamConfig{builtinFake("alpha")}, Builtin: metaBuiltins, Tracing: tp})
	return h, func() {
		if err := tp.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}

// Every request the gateway answers has a server span, not tools/call
// alone, continuing the client's trace from _meta; each routing decision
// has a span under its request's, saying what was decided (candidates,
// top tool and score, abstention, alerts) and never what was asked.
func TestTracesCoverEveryRequestAndRoute(t *testing.T) {
	recv := &otlpReceiver{}
	h, flush := tracedHub(t, recv)
	waitForTool(t, h, "alpha_echo")
	p := fakePlanner(t, func(fakeollama.ChatRequest) (string, error) {
		return `{"decision":"REASON_ONLY","confidence":0.9,"reasoning":"nothing to call"}`, nil
	})
	c := overHTTPWith(t, ServerOptions{Hub: h, Router: routing.NewRouter(routing.RouterOptions{}), Planner: p})

	const traceID, parentID = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	const secret = "sk-live-0123456789abcdef"
	query := "echo the text back, my key is " + secret
	if _, err := c.session.ListTools(t.Context(), &sdk.ListToolsParams{Meta: sdk.Meta{
		"traceparent": "00-" + traceID + "-" + parentID + "-01", QueryMetaKey: query}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.session.ListResources(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	if res := c.call(t, "request_more_tools", map[string]any{"query": "sleep for some milliseconds " + secret}); res.IsError {
		t.Fatalf("request_more_tools: %s", resultText(res))
	}
	if res := c.call(t, "plan", map[string]any{"query": "echo the text back " + secret}); res.IsError {
		t.Fatalf("plan: %s", resultText(res))
	}
	flush()

	for _, name := range []string{"initialize", "resources/list"} {
		if s := recv.span(t, name); s.Kind != tracepb.Span_SPAN_KIND_SERVER {
			t.Errorf("span %q of kind %v, want server", name, s.Kind)
		}
	}
	list, listRoute := recv.span(t, "tools/list"), recv.span(t, routeSpanList)
	if got := hex.EncodeToString(list.TraceId) + "/" + hex.EncodeToString(list.ParentSpanId); got != traceID+"/"+parentID {
		t.Errorf("tools/list span in trace/parent %s, want the client's %s/%s", got, traceID, parentID)
	}
	if string(listRoute.ParentSpanId) != string(list.SpanId) {
		t.Errorf("the tools/list route span's parent %x, want the tools/list span %x", listRoute.ParentSpanId, list.SpanId)
	}
	call, discover := recv.span(t, "tools/call request_more_tools"), recv.span(t, routeSpanDiscover)
	if string(discover.ParentSpanId) != string(call.SpanId) {
		t.Errorf("the discovery's route span's parent %x, want the request_more_tools span %x", discover.ParentSpanId, call.SpanId)
	}
	plan, planRoute := recv.span(t, "tools/call plan"), recv.span(t, routeSpanPlan)
	if string(planRoute.ParentSpanId) != string(plan.SpanId) {
		t.Errorf("the plan's route span's parent %x, want the plan span %x", planRoute.ParentSpanId, plan.SpanId)
	}
	for s, top := range map[*tracepb.Span]string{listRoute: "alpha_echo", discover: "alpha_sleep", planRoute: "alpha_echo"} {
		attrs := spanAttrs(s)
		if attrs["mcp.route.top_tool"] != top || attrs["mcp.route.abstained"] != "false" || attrs["mcp.route.candidates"] == "" ||
			attrs["mcp.route.top_score"] == "" || attrs["mcp.route.selected"] == "" {
			t.Errorf("span %q has attributes %v, want the top tool %s, its score, candidates, selected, not abstained", s.Name, attrs, top)
		}
	}
	if got := spanAttrs(discover)["mcp.route.added"]; got == "" || got == "0" {
		t.Errorf("the discovery's span says %q tools added, want the tools it put on the belt", got)
	}
	recv.mu.Lock()
	defer recv.mu.Unlock()
	for _, s := range recv.spans {
		for k, v := range spanAttrs(s) {
			if strings.Contains(v, secret) {
				t.Errorf("span %q attribute %s holds the query: %q", s.Name, k, v)
			}
		}
	}
}

// spanAttrs are a span's attributes as text.
func spanAttrs(s *tracepb.Span) map[string]string {
	out := map[string]string{}
	for _, kv := range s.Attributes {
		switch v := kv.Value.Value.(type) {
		case *commonpb.AnyValue_StringValue:
			out[kv.Key] = v.StringValue
		case *commonpb.AnyValue_IntValue:
			out[kv.Key] = strconv.FormatInt(v.IntValue, 10)
		case *commonpb.AnyValue_DoubleValue:
			out[kv.Key] = strconv.FormatFloat(v.DoubleValue, 'g', -1, 64)
		case *commonpb.AnyValue_BoolValue:
			out[kv.Key] = strconv.FormatBool(v.BoolValue)
		default:
			out[kv.Key] = kv.Value.String()
		}
	}
	return out
}

// Without tracing, a routing decision's span costs no allocation: no
// span, name or attributes are built.
func TestRouteSpansAllocateNothingWhenOff(t *testing.T) {
	s := &Server{hub: &Hub{}}
	d := routing.Decision{Ranked: []routing.Candidate{{Name: "alpha_echo", Score: 0.9}}, Alerts: []routing.Alert{{Kind: "collision"}}}
	ctx := t.Context()
	allocs := testing.AllocsPerRun(100, func() {
		_, span := s.startRouteSpan(ctx, routeSpanList)
		endDiscoverySpan(span, routing.Discovery{Decision: d, Added: []string{"alpha_echo"}}, nil)
	})
	if allocs != 0 {
		t.Errorf("a routing span with tracing off allocates %v times, want 0", allocs)
	}
	if opts := s.traceRequests(); len(opts) != 0 {
		t.Errorf("with tracing off the server gets %d tracing options, want none", len(opts))
	}
}

// BenchmarkRequestSpans is the cost of a request's span: tools/list
// handled with tracing off and on (spans recorded, exported nowhere).
func BenchmarkRequestSpans(b *testing.B) {
	for _, on := range []bool{false, true} {
		b.Run(map[bool]string{false: "off", true: "on"}[on], func(b *testing.B) {
			opts := Options{Upstreams: []UpstreamConfig{builtinFake("alpha")}, Builtin: metaBuiltins}
			if on {
				opts.Tracing = sdktrace.NewTracerProvider()
			}
			s := NewServer(ServerOptions{Hub: startHubWith(b, opts)})
			b.Cleanup(s.Close)
			msg := json.RawMessage(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				s.mcp.HandleMessage(ctx, msg)
			}
		})
	}
}

// A method the client made up names no span: its span is "unknown
// method", with the method clipped in an attribute; tools/call and the
// tool handler's span are left to traceCalls.
func TestRequestSpanNamesAreBounded(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tr := requestTracer{sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)).Tracer(tracerName)}
	long := "x/" + strings.Repeat("y", 4096)
	for _, name := range []string{"mcp.tools/list", "mcp." + long, "mcp.tools/call", "tool.alpha_echo"} {
		kind := mcptracing.SpanKindServer
		if name == "tool.alpha_echo" {
			kind = mcptracing.SpanKindInternal
		}
		_, span := tr.Start(t.Context(), name, kind, mcptracing.String("mcp.method", strings.TrimPrefix(name, "mcp.")))
		span.End()
	}
	var got []string
	for _, s := range rec.Ended() {
		got = append(got, s.Name())
		for _, kv := range s.Attributes() {
			if len(kv.Value.String()) > call.MaxToolBytes+len("…") {
				t.Errorf("span %q attribute %s of %d bytes, want at most %d", s.Name(), kv.Key, len(kv.Value.String()), call.MaxToolBytes)
			}
		}
	}
	if want := []string{"tools/list", "unknown method"}; !slices.Equal(got, want) {
		t.Errorf("spans %q, want %q", got, want)
	}
}

// A resource read and a prompt get pass through the read pipeline's
// tracing stage: each records a client span of its upstream request, the
// resource's URI in an attribute rather than in the span's name.
func TestTracesCoverReads(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	h := startHubWith(t, Options{Upstreams: []UpstreamConfig{builtinFake("alpha")}, Builtin: fakeBuiltins,
		Tracing: sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))})
	req := mcp.ReadResourceRequest{}
	req.Params.URI = "fake://alpha/readme"
	if _, err := h.ReadResource(t.Context(), "alpha", req); err != nil {
		t.Fatalf("ReadResource: %v", err)
	}
	if _, err := h.GetPrompt(t.Context(), "alpha_greet", map[string]string{"name": "Ada"}); err != nil {
		t.Fatalf("GetPrompt: %v", err)
	}
	got := map[string]string{}
	for _, s := range rec.Ended() {
		for _, kv := range s.Attributes() {
			if kv.Key == "mcp.resource.uri" || kv.Key == "mcp.prompt" {
				got[s.Name()] = string(kv.Key) + "=" + kv.Value.AsString()
			}
		}
	}
	want := map[string]string{
		"upstream alpha resources/read":          "mcp.resource.uri=fake://alpha/readme",
		"upstream alpha prompts/get alpha_greet": "mcp.prompt=alpha_greet",
	}
	if !maps.Equal(got, want) {
		t.Errorf("spans of reads: got %v, want %v", got, want)
	}
}

// A resource URI can carry a credential (a signed link, a token in its
// query): it reaches the read's span, which leaves the process, redacted.
func TestNoSecretInSpanAttributes(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	h := startHubWith(t, Options{Upstreams: []UpstreamConfig{builtinFake("alpha")}, Builtin: fakeBuiltins,
		Tracing: sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))})
	secret := "ghp_" + strings.Repeat("aB3dE5fG7h", 4)[:36]
	req := mcp.ReadResourceRequest{}
	req.Params.URI = "fake://alpha/readme?token=" + secret
	_, _ = h.ReadResource(t.Context(), "alpha", req) // the span is recorded either way
	seen := false
	for _, s := range rec.Ended() {
		for _, kv := range s.Attributes() {
			if kv.Key == "mcp.resource.uri" {
				seen = true
				if strings.Contains(kv.Value.AsString(), secret[4:]) {
					t.Errorf("span %q: %s=%q keeps the secret", s.Name(), kv.Key, kv.Value.AsString())
				}
			}
		}
	}
	if !seen {
		t.Fatal("no span of the read has mcp.resource.uri")
	}
}
