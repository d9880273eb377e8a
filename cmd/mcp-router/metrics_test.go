package main

import (
	"io"
	"net/http"
	"os/exec"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestServeHTTPMetricsCountWhatWasServed runs the binary over HTTP, makes
// calls with an MCP client, and reads them back from /metrics.
func TestServeHTTPMetricsCountWhatWasServed(t *testing.T) {
	bin := buildBinary(t)
	cfg := writeFile(t, t.TempDir(), "p.yaml", calcProfile)
	cmd := exec.Command(bin, "serve", "--http", "127.0.0.1:0", "--config", cfg)
	base := startServeHTTP(t, cmd)
	cl := sdk.NewClient(&sdk.Implementation{Name: "metrics-test", Version: "1"}, nil)
	// A session (2025-11-25): the sessions gauge counts it.
	s, err := cl.Connect(t.Context(), &sdk.StreamableClientTransport{Endpoint: base + "/mcp", MaxRetries: -1},
		&sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for range 3 {
		if _, err := s.CallTool(t.Context(), &sdk.CallToolParams{Name: "call_tool",
			Arguments: map[string]any{"name": "calculator_add", "arguments": map[string]any{"a": 1, "b": 2}}}); err != nil {
			t.Fatal(err)
		}
	}
	s.CallTool(t.Context(), &sdk.CallToolParams{Name: "request_more_tools", Arguments: map[string]any{"query": "divide two numbers"}})
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{
		`mcp_router_tool_calls_total{outcome="ok",tool="calculator_add",upstream="calculator"} 3`,
		`mcp_router_discoveries_total 1`,
		`mcp_router_upstream_up{state="connected",upstream="calculator"} 1`,
		`mcp_router_sessions 1`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}
