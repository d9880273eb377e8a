package integrity

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

// npmTools lists the tools of a real npm MCP server installed by npm ci at
// the repository root. Without it the test is skipped locally and fails in
// CI, where it must have run.
func npmTools(t *testing.T, bin string, env []string, args ...string) []mcp.Tool {
	t.Helper()
	if testing.Short() {
		t.Skip("interop tests need node; skipped with -short")
	}
	path, err := filepath.Abs(filepath.Join("..", "..", "node_modules", ".bin", bin))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is not installed: the test command runs npm ci first", bin)
		}
		t.Skipf("%s not installed (run npm ci at the repository root)", bin)
	}
	c, err := client.NewStdioMCPClient(path, env, args...)
	if err != nil {
		t.Fatalf("starting %s: %v", bin, err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "integrity-test", Version: "0"}
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatalf("initializing %s: %v", bin, err)
	}
	res, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		t.Fatalf("listing tools of %s: %v", bin, err)
	}
	return res.Tools
}

// TestInteropRealServers scans the tools of real servers (their own words,
// not ours) and pins them across a server restart: none may be flagged,
// and a restarted server must not read as a rug pull.
func TestInteropRealServers(t *testing.T) {
	dir := t.TempDir()
	servers := map[string]func() []mcp.Tool{
		"everything": func() []mcp.Tool { return npmTools(t, "mcp-server-everything", nil) },
		"fs":         func() []mcp.Tool { return npmTools(t, "mcp-server-filesystem", nil, dir) },
		"memory": func() []mcp.Tool {
			return npmTools(t, "mcp-server-memory", []string{"MEMORY_FILE_PATH=" + filepath.Join(dir, "memory.jsonl")})
		},
	}
	listings := make(map[string][]mcp.Tool)
	for name, list := range servers {
		listings[name] = list()
	}
	store, err := OpenStore(&memPins{})
	if err != nil {
		t.Fatal(err)
	}
	for name, tools := range listings {
		var others []string
		for other, ts := range listings {
			for _, tool := range ts {
				if other != name {
					others = append(others, tool.Name, other+"_"+tool.Name)
				}
			}
		}
		for _, tool := range tools {
			if f := Scan(tool, others); f != nil {
				t.Errorf("%s/%s: got findings %+v, want none", name, tool.Name, f)
			}
		}
		if _, err := store.Check(name, tools); err != nil {
			t.Fatal(err)
		}
	}
	for name, list := range servers { // restarted servers, same contracts
		verdicts, err := store.Check(name, list())
		if err != nil {
			t.Fatal(err)
		}
		for tool, v := range verdicts {
			if v != VerdictPinned {
				t.Errorf("%s/%s after restart: got %s, want %s", name, tool, v, VerdictPinned)
			}
		}
	}
	t.Logf("scanned %d real tools", len(store.List()))
}
