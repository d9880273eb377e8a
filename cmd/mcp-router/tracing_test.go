package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
)

// With tracing.otlp_endpoint, the built binary exports a span for the
// call and one for its upstream call to an OTLP/HTTP receiver, under the
// configured service name; at exit it flushes what it holds.
func TestServeExportsSpansOverOTLP(t *testing.T) {
	var (
		mu       sync.Mutex
		names    []string
		services []string
	)
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req coltracepb.ExportTraceServiceRequest
		if r.URL.Path != "/v1/traces" || proto.Unmarshal(body, &req) != nil {
			http.Error(w, "not an OTLP trace export", http.StatusBadRequest)
			return
		}
		mu.Lock()
		for _, rs := range req.ResourceSpans {
			for _, a := range rs.Resource.GetAttributes() {
				if a.Key == "service.name" {
					services = append(services, a.Value.GetStringValue())
				}
			}
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					names = append(names, s.Name)
				}
			}
		}
		mu.Unlock()
		out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.Write(out)
	}))
	defer recv.Close()
	bin := buildBinary(t)
	dir := t.TempDir()
	cfg := writeFile(t, dir, "p.yaml", fmt.Sprintf(`state_dir: %q
tracing: {otlp_endpoint: %q, service_name: gateway-under-test}
profiles:
  default:
    upstreams:
      calculator: {builtin: calculator}
`, filepath.Join(dir, "state"), recv.URL))
	c := startStdioGateway(t, bin, cfg)
	callTool(t, c, "calculator_add", map[string]any{"a": 1, "b": 2})
	c.Close() // the gateway exits and flushes its spans
	eventually(t, "the call's spans at the receiver", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return slices.Contains(names, "tools/call calculator_add") && slices.Contains(names, "upstream calculator calculator_add")
	})
	mu.Lock()
	defer mu.Unlock()
	if len(services) == 0 || services[0] != "gateway-under-test" {
		t.Errorf("service.name %q, want gateway-under-test", services)
	}
}
