package main

import (
	"io"
	"net/http"
	"os/exec"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// serve --http opens its listener and answers initialize while an upstream
// (a child that never answers) is still starting: /healthz says alive,
// /readyz 503 with the hung upstream starting, and an MCP client calls the
// upstream that did connect.
func TestServeHTTPReadyAtOnceWithAHungUpstream(t *testing.T) {
	bin := buildBinary(t)
	cfg := writeFile(t, t.TempDir(), "p.yaml", "profiles:\n  default:\n    upstreams:\n"+
		"      calculator: {builtin: calculator}\n      hung: {command: sh, args: [\"-c\", \"cat >/dev/null\"]}\n")
	cmd := exec.Command(bin, "serve", "--http", "127.0.0.1:0", "--config", cfg)
	base := startServeHTTP(t, cmd)
	get := func(path string) (int, string) {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	if code, body := get("/healthz"); code != http.StatusOK || !strings.Contains(body, `"alive"`) {
		t.Errorf("/healthz: %d %s", code, body)
	}
	// The built-in calculator joins within moments; hung never does.
	var code int
	var body string
	eventually(t, "the calculator to join", func() bool {
		code, body = get("/readyz")
		return strings.Contains(body, `"connected":1`)
	})
	if code != http.StatusServiceUnavailable || !strings.Contains(body, `"name":"hung"`) || !strings.Contains(body, `"starting":1`) {
		t.Errorf("/readyz: %d %s, want 503 with hung starting", code, body)
	}
	cl := sdk.NewClient(&sdk.Implementation{Name: "ready-test", Version: "1"}, nil)
	s, err := cl.Connect(t.Context(), &sdk.StreamableClientTransport{Endpoint: base + "/mcp", MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	res, err := s.CallTool(t.Context(), &sdk.CallToolParams{Name: "call_tool",
		Arguments: map[string]any{"name": "calculator_add", "arguments": map[string]any{"a": 1, "b": 2}}})
	if err != nil || res.IsError {
		t.Fatalf("calculator_add while hung starts: %v %+v", err, res)
	}
	if code, body = get("/readyz"); !strings.Contains(body, `"name":"hung"`) {
		t.Errorf("/readyz after the call: %d %s, want hung still named", code, body)
	}
}
