package builtin

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func TestNames(t *testing.T) {
	want := []string{"calculator", "docs", "web"}
	if diff := cmp.Diff(want, Names()); diff != "" {
		t.Errorf("Names() mismatch (-want +got):\n%s", diff)
	}
}

func TestNewBuildsEveryServer(t *testing.T) {
	wantTools := map[string][]string{
		"calculator": {"absolute", "add", "cos", "cube", "divide", "exp", "factorial", "ln", "log", "modulo",
			"multiply", "power", "sin", "sqrt", "square", "subtract", "tan"},
		"docs": {"search_documents"},
		"web":  {"extract_links", "fetch_url"},
	}
	for _, name := range Names() {
		t.Run(name, func(t *testing.T) {
			srv, err := New(name, nil)
			if err != nil {
				t.Fatalf("New(%q, nil): %v", name, err)
			}
			c := connect(t, srv)
			info := initialize(t, c)
			if info.ServerInfo.Name != name {
				t.Errorf("server name: got %q, want %q", info.ServerInfo.Name, name)
			}
			if info.Capabilities.Tools == nil {
				t.Errorf("server does not advertise the tools capability")
			}
			if diff := cmp.Diff(wantTools[name], toolNames(t, c)); diff != "" {
				t.Errorf("tools mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNewRejectsBadArguments(t *testing.T) {
	tests := []struct {
		name     string
		server   string
		args     []string
		wantErrs []string // substrings of the error
	}{
		{"unknown server", "shell", nil, []string{`"shell"`, "calculator, docs, web"}},
		{"empty name", "", nil, []string{"unknown built-in server"}},
		{"calculator takes no flags", "calculator", []string{"--root", "x"}, []string{"calculator", "-root"}},
		{"calculator takes no arguments", "calculator", []string{"extra"}, []string{"calculator", `"extra"`, "no flags"}},
		{"web unknown flag", "web", []string{"--timout", "5s"}, []string{"web", "-timout"}},
		{"web bad timeout", "web", []string{"--timeout", "soon"}, []string{"web", "-timeout", "soon"}},
		{"web zero timeout", "web", []string{"--timeout=0s"}, []string{"web", "--timeout", "positive"}},
		{"web allow-private not a boolean", "web", []string{"--allow-private=maybe"}, []string{"web", "-allow-private", "maybe"}},
		{"docs unknown flag", "docs", []string{"--dir", "x"}, []string{"docs", "-dir"}},
		{"docs missing value", "docs", []string{"--root"}, []string{"docs", "-root"}},
		{"docs empty root", "docs", []string{"--root="}, []string{"docs", "--root", "empty"}},
		{"docs leftover argument", "docs", []string{"--root", "a", "b"}, []string{"docs", `"b"`, "--root"}},
		{"help lists the flags", "web", []string{"-h"}, []string{"web", "--timeout", "default 20s", "--allow-private (default false)", "HTTP_PROXY"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, err := New(tt.server, tt.args)
			if err == nil {
				t.Fatalf("New(%q, %q): got server %v, want an error", tt.server, tt.args, srv)
			}
			for _, want := range tt.wantErrs {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("New(%q, %q) error: got %q, want it to contain %q", tt.server, tt.args, err, want)
				}
			}
		})
	}
}

func TestNewAcceptsFlags(t *testing.T) {
	tests := []struct {
		server string
		args   []string
	}{
		{"web", []string{"--timeout", "5s"}},
		{"web", []string{"-timeout=1m"}},
		{"web", []string{"--allow-private"}},
		{"web", []string{"--allow-private=false", "--timeout", "5s"}},
		{"docs", []string{"--root", "./no/such/folder/yet"}}, // checked at search time, not here
		{"docs", []string{"--root=" + "/"}},
		{"docs", nil}, // mcp-router's own documentation
	}
	for _, tt := range tests {
		if _, err := New(tt.server, tt.args); err != nil {
			t.Errorf("New(%q, %q): got error %v, want none", tt.server, tt.args, err)
		}
	}
}

// connect starts an in-process MCP client on srv and closes it when the test ends.
func connect(t testing.TB, srv *server.MCPServer) *client.Client {
	t.Helper()
	c, err := client.NewInProcessClient(srv)
	if err != nil {
		t.Fatalf("NewInProcessClient: %v", err)
	}
	if err := c.Start(t.Context()); err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func initialize(t testing.TB, c *client.Client) *mcp.InitializeResult {
	t.Helper()
	req := mcp.InitializeRequest{}
	req.Params.ProtocolVersion = mcp.LATEST_LEGACY_PROTOCOL_VERSION
	req.Params.ClientInfo = mcp.Implementation{Name: "builtin-test", Version: "1"}
	res, err := c.Initialize(t.Context(), req)
	if err != nil {
		t.Fatalf("Initialize: %v", err)
	}
	return res
}

// start builds the named server and returns an initialized client for it.
func start(t testing.TB, name string, args ...string) *client.Client {
	t.Helper()
	srv, err := New(name, args)
	if err != nil {
		t.Fatalf("New(%q, %q): %v", name, args, err)
	}
	c := connect(t, srv)
	initialize(t, c)
	return c
}

func listTools(t testing.TB, c *client.Client) []mcp.Tool {
	t.Helper()
	res, err := c.ListTools(t.Context(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatalf("ListTools: %v", err)
	}
	return res.Tools
}

func toolNames(t testing.TB, c *client.Client) []string {
	t.Helper()
	var names []string
	for _, tool := range listTools(t, c) {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	return names
}

// call calls a tool; a protocol error fails the test, an isError result does not.
func call(t testing.TB, c *client.Client, tool string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = args
	res, err := c.CallTool(t.Context(), req)
	if err != nil {
		t.Fatalf("CallTool(%s, %v): %v", tool, args, err)
	}
	return res
}

// text joins the text content of a result.
func text(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := mcp.AsTextContent(c); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// structured decodes a successful result's structured content into a T.
func structured[T any](t testing.TB, res *mcp.CallToolResult) T {
	t.Helper()
	var v T
	if res.IsError {
		t.Fatalf("got an isError result %q, want success", text(res))
	}
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatalf("marshalling structured content: %v", err)
	}
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("structured content %s: %v", b, err)
	}
	return v
}

// wantError checks that res is an isError result whose text contains every one of wants.
func wantError(t testing.TB, res *mcp.CallToolResult, wants ...string) {
	t.Helper()
	if !res.IsError {
		t.Fatalf("got a success result %q, want isError", text(res))
	}
	for _, w := range wants {
		if !strings.Contains(text(res), w) {
			t.Errorf("error text: got %q, want it to contain %q", text(res), w)
		}
	}
}
