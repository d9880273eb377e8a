package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-router/mcp-router/internal/syncbuf"
)

// lockedBuffer is a child's stderr, read while the child writes it.
type lockedBuffer = syncbuf.Buffer

// isolatedEnv is an environment with no configuration to find: HOME and
// the XDG directories in dir, and nothing of the test's MCP_ROUTER_*.
func isolatedEnv(dir string, extra ...string) []string {
	return append([]string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + dir,
		"XDG_CONFIG_HOME=" + filepath.Join(dir, "config"), "XDG_STATE_HOME=" + filepath.Join(dir, "state"),
	}, extra...)
}

// The built-in default works from any directory: serve started by a real
// MCP client in an empty folder, with no profiles.yaml anywhere, connects
// every upstream without a warning, and its docs server finds passages.
func TestServeDefaultFromAnEmptyDirectory(t *testing.T) {
	bin := buildBinary(t)
	dir := t.TempDir()
	cmd := exec.Command(bin, "serve")
	cmd.Dir = dir
	cmd.Env = isolatedEnv(dir)
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := client.Connect(t.Context(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connecting: %v; stderr:\n%s", err, stderr.String())
	}
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "call_tool", Arguments: map[string]any{
		"name": "docs_search_documents", "arguments": map[string]any{"query": "bearer token"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	var txt string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			txt += tc.Text
		}
	}
	if res.IsError || !strings.Contains(txt, "README.md") {
		t.Errorf("docs_search_documents: got %q (isError %v), want passages of README.md", txt, res.IsError)
	}
	if err := cs.Close(); err != nil {
		t.Errorf("closing: %v", err)
	}
	log := stderr.String()
	for _, up := range []string{"calculator", "web", "docs"} {
		if !strings.Contains(log, "upstream connected upstream="+up) {
			t.Errorf("%s not connected at start:\n%s", up, log)
		}
	}
	for _, bad := range []string{" WRN ", " ERR "} {
		if strings.Contains(log, bad) {
			t.Errorf("the default logged a warning or error:\n%s", log)
		}
	}
	if n := strings.Count(log, "pinned "); n != 3 {
		t.Errorf("first start: %d pin summaries, want one per upstream:\n%s", n, log)
	}
}
