package proxy

//lint:file-ignore SA1019 these tests declare the sampling capability, which clients of 2025-11-25 still have

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// npmServer returns the path of an npm MCP server installed by the
// README's test command (npm ci at the repository root). Without it the
// test is skipped locally and fails in CI, where it must have run.
func npmServer(t *testing.T, bin string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("interop tests need node; skipped with -short")
	}
	path, err := filepath.Abs(filepath.Join("..", "node_modules", ".bin", bin))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is not installed: the test command runs npm ci first", bin)
		}
		t.Skipf("%s not installed (run npm ci at the repository root)", bin)
	}
	return path
}

// interopHub runs the real npm servers everything, filesystem (on dir) and
// memory (in dir) behind one hub.
func interopHub(t *testing.T, dir string) *Hub {
	t.Helper()
	ups := []UpstreamConfig{
		{Name: "everything", Transport: TransportStdio, Command: npmServer(t, "mcp-server-everything"), Prefix: "ev_"},
		{Name: "fs", Transport: TransportStdio, Command: npmServer(t, "mcp-server-filesystem"), Args: []string{dir}, Prefix: "fs_"},
		{Name: "memory", Transport: TransportStdio, Command: npmServer(t, "mcp-server-memory"), Prefix: "mem_",
			Env: map[string]string{"MEMORY_FILE_PATH": filepath.Join(dir, "memory.jsonl")}},
	}
	h := startHubWith(t, Options{Upstreams: ups, InitTimeout: 60 * time.Second})
	for _, s := range h.Status() {
		if s.State != StateConnected {
			t.Fatalf("upstream %s: %s %s", s.Name, s.State, s.Err)
		}
	}
	return h
}

func TestInteropNPMServersBehindProxy(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	c := overHTTP(t, interopHub(t, dir))

	t.Run("everything get-sum", func(t *testing.T) {
		if got := resultText(c.call(t, "ev_get-sum", map[string]any{"a": 2, "b": 3})); !strings.Contains(got, "5") {
			t.Errorf("got %q, want the sum 5", got)
		}
	})
	t.Run("filesystem write then read", func(t *testing.T) {
		path := filepath.Join(dir, "note.txt")
		if res := c.call(t, "fs_write_file", map[string]any{"path": path, "content": "through the proxy"}); res.IsError {
			t.Fatalf("write_file: %s", resultText(res))
		}
		res := c.call(t, "call_tool", map[string]any{"name": "fs_read_text_file", "arguments": map[string]any{"path": path}})
		if got := resultText(res); got != "through the proxy" {
			t.Errorf("read_text_file: got %q", got)
		}
	})
	t.Run("filesystem refusal is an error result", func(t *testing.T) {
		res := c.call(t, "fs_read_text_file", map[string]any{"path": "/etc/passwd"})
		if !res.IsError {
			t.Errorf("reading outside the allowed dir: got %q, want isError", resultText(res))
		}
	})
	t.Run("memory create then search", func(t *testing.T) {
		c.call(t, "mem_create_entities", map[string]any{"entities": []any{map[string]any{
			"name": "mcp-router", "entityType": "project", "observations": []any{"written in Go"}}}})
		if got := resultText(c.call(t, "mem_search_nodes", map[string]any{"query": "Go"})); !strings.Contains(got, "mcp-router") {
			t.Errorf("search_nodes: got %q", got)
		}
	})
	t.Run("everything progress", func(t *testing.T) {
		params := &sdk.CallToolParams{Name: "ev_trigger-long-running-operation", Arguments: map[string]any{"duration": 1, "steps": 3}}
		params.SetProgressToken("interop-1")
		if _, err := c.session.CallTool(t.Context(), params); err != nil {
			t.Fatal(err)
		}
		// The SDK client hands notifications to its handler on its own
		// schedule: the last may land just after the result.
		eventually(t, 5*time.Second, "3 progress notifications", func() bool {
			c.mu.Lock()
			defer c.mu.Unlock()
			return len(c.progress) == 3
		})
		c.mu.Lock()
		defer c.mu.Unlock()
		for _, p := range c.progress {
			if p.ProgressToken != "interop-1" {
				t.Errorf("progress token %v, want the client's own", p.ProgressToken)
			}
		}
	})
	t.Run("schemas as the servers list them", func(t *testing.T) {
		res, err := c.session.ListTools(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]*sdk.Tool{}
		for _, tool := range res.Tools {
			seen[tool.Name] = tool
		}
		for _, srv := range []struct {
			prefix string
			cmd    *exec.Cmd
		}{
			{"ev_", exec.Command(npmServer(t, "mcp-server-everything"))},
			{"fs_", exec.Command(npmServer(t, "mcp-server-filesystem"), dir)},
		} {
			for _, want := range directTools(t, srv.cmd) {
				got, ok := seen[srv.prefix+want.Name]
				if !ok {
					t.Errorf("%s%s: not listed through the proxy", srv.prefix, want.Name)
					continue
				}
				if g, w := canonical(t, got.InputSchema), canonical(t, want.InputSchema); g != w {
					t.Errorf("%s%s inputSchema through the proxy:\ngot  %s\nwant %s", srv.prefix, want.Name, g, w)
				}
				if g, w := canonical(t, got.OutputSchema), canonical(t, want.OutputSchema); g != w {
					t.Errorf("%s%s outputSchema through the proxy:\ngot  %s\nwant %s", srv.prefix, want.Name, g, w)
				}
			}
		}
	})
	t.Run("everything prompts and resources", func(t *testing.T) {
		prompts, err := c.session.ListPrompts(t.Context(), nil)
		if err != nil || len(prompts.Prompts) == 0 {
			t.Fatalf("prompts: %v %v", err, prompts)
		}
		if !slices.ContainsFunc(prompts.Prompts, func(p *sdk.Prompt) bool { return strings.HasPrefix(p.Name, "ev_") }) {
			t.Errorf("prompts not namespaced: %v", prompts.Prompts[0].Name)
		}
		res, err := c.session.ListResources(t.Context(), nil)
		if err != nil || len(res.Resources) == 0 {
			t.Fatalf("resources: %v", err)
		}
		r, err := c.session.ReadResource(t.Context(), &sdk.ReadResourceParams{URI: res.Resources[0].URI})
		if err != nil || len(r.Contents) == 0 {
			t.Errorf("read %s: %v", res.Resources[0].URI, err)
		}
	})
}

// directTools lists a stdio server's tools with the official Go SDK's
// client, the proxy not in between. The client declares what the proxy
// declares upstream (sampling and elicitation, no roots), as servers
// offer some tools only to clients that can serve them.
func directTools(t *testing.T, cmd *exec.Cmd) []*sdk.Tool {
	t.Helper()
	cl := sdk.NewClient(&sdk.Implementation{Name: "interop-direct", Version: "1"}, &sdk.ClientOptions{
		Capabilities: &sdk.ClientCapabilities{Sampling: &sdk.SamplingCapabilities{}, Elicitation: &sdk.ElicitationCapabilities{}},
	})
	s, err := cl.Connect(t.Context(), &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connecting to %s: %v", cmd.Path, err)
	}
	defer s.Close()
	var tools []*sdk.Tool
	for tool, err := range s.Tools(t.Context(), nil) {
		if err != nil {
			t.Fatalf("listing %s: %v", cmd.Path, err)
		}
		tools = append(tools, tool)
	}
	if len(tools) == 0 {
		t.Fatalf("%s lists no tools", cmd.Path)
	}
	return tools
}
