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
		`mcp_router_upstream_up{profile="default",state="connected",upstream="calculator"} 1`,
		`mcp_router_sessions 1`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}

// Two profiles served side by side, each with an upstream named
// calculator, keep their gauges apart by profile (the upstream's state,
// the catalog's size) while the call counters, shared, count every
// profile's calls once.
func TestServeHTTPMetricsPerProfile(t *testing.T) {
	bin := buildBinary(t)
	dir := t.TempDir()
	cfg := writeFile(t, dir, "p.yaml", `http:
  tokens:
    - {token: "${ALPHA_TOKEN}", profile: alpha}
    - {token: "${BETA_TOKEN}", profile: beta}
    - {token: "${ADMIN_TOKEN}", admin: true}
default_profile: alpha
profiles:
  alpha:
    upstreams:
      calculator: {builtin: calculator}
  beta:
    upstreams:
      calculator: {command: `+dir+`/no-such-server}
`)
	cmd := exec.Command(bin, "serve", "--http", "127.0.0.1:0", "--config", cfg)
	cmd.Env = isolatedEnv(dir, "ALPHA_TOKEN=alpha-token", "BETA_TOKEN=beta-token", "ADMIN_TOKEN=admin-token")
	base := startServeHTTP(t, cmd)
	cl := sdk.NewClient(&sdk.Implementation{Name: "metrics-test", Version: "1"}, nil)
	s, err := cl.Connect(t.Context(), &sdk.StreamableClientTransport{Endpoint: base + "/mcp", MaxRetries: -1,
		HTTPClient: &http.Client{Transport: withToken{"alpha-token"}}}, &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for range 2 {
		if _, err := s.CallTool(t.Context(), &sdk.CallToolParams{Name: "call_tool",
			Arguments: map[string]any{"name": "calculator_add", "arguments": map[string]any{"a": 1, "b": 2}}}); err != nil {
			t.Fatal(err)
		}
	}
	// The metrics show every profile: a token served one profile may not
	// read them (TestSurfaceAuthzMetricsAndReadyz); an administrative one may.
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, base+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer beta-token")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("/metrics with a token of profile beta: got %d, want 403", resp.StatusCode)
	}
	req.Header.Set("Authorization", "Bearer admin-token")
	if resp, err = http.DefaultClient.Do(req); err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	text := string(body)
	for _, want := range []string{
		`mcp_router_upstream_up{profile="alpha",state="connected",upstream="calculator"} 1`,
		`mcp_router_upstream_up{profile="beta",state="connected",upstream="calculator"} 0`,
		`mcp_router_tool_calls_total{outcome="ok",tool="calculator_add",upstream="calculator"} 2`,
		`mcp_router_catalog_tools{profile="beta"} 0`,
		`mcp_router_belt_sessions{profile="alpha"}`,
		`mcp_router_belt_sessions{profile="beta"}`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	if strings.Contains(text, `mcp_router_catalog_tools{profile="alpha"} 0`) || !strings.Contains(text, `mcp_router_catalog_tools{profile="alpha"} `) {
		t.Errorf("/metrics: want alpha's catalog size above 0:\n%s", grepLines(text, "mcp_router_catalog_tools"))
	}
}

// withToken sends its token with every request.
type withToken struct{ token string }

func (b withToken) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// grepLines are the lines of text that contain s.
func grepLines(text, s string) string {
	var out []string
	for line := range strings.SplitSeq(text, "\n") {
		if strings.Contains(line, s) {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}
