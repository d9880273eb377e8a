package main

import (
	"bufio"
	"io"
	"net/http"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestServeHTTPMetricsCountWhatWasServed runs the binary over HTTP, makes
// calls with an MCP client, and reads them back from /metrics.
func TestServeHTTPMetricsCountWhatWasServed(t *testing.T) {
	bin := buildBinary(t)
	cfg := writeFile(t, t.TempDir(), "p.yaml", calcProfile)
	cmd := exec.Command(bin, "serve", "--http", "127.0.0.1:0", "--config", cfg)
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	urls := make(chan string, 1)
	go func() {
		re := regexp.MustCompile(`url=(http://\S+)/mcp`)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				urls <- m[1]
			}
		}
	}()
	var base string
	select {
	case base = <-urls:
	case <-time.After(30 * time.Second):
		t.Fatal("the gateway did not report its address")
	}
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
