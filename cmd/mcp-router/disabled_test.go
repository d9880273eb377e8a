package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-router/mcp-router/proxy"
)

// serveStdioInProcess runs serve in this process with the environment
// vars, as a client would over stdio, and returns an initialized client
// and the gateway's log. The gateway stops when the test ends.
func serveStdioInProcess(t *testing.T, vars map[string]string, args ...string) (*client.Client, *lockedBuffer) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	log := &lockedBuffer{}
	e := &env{stdin: inR, stdout: outW, stderr: log, getenv: func(k string) (string, bool) { v, ok := vars[k]; return v, ok }}
	root := newRootCmd(e)
	root.SetArgs(append([]string{"serve"}, args...))
	root.SetOut(outW)
	root.SetErr(log)
	ctx, cancel := context.WithCancel(context.WithoutCancel(t.Context()))
	served := make(chan error, 1)
	go func() {
		err := root.ExecuteContext(ctx)
		if cerr := e.closeState(); err == nil {
			err = cerr
		}
		outW.Close()
		served <- err
	}()
	t.Cleanup(func() {
		cancel()
		inW.Close()
		if err := <-served; err != nil {
			t.Errorf("serve: %v\n%s", err, log.String())
		}
	})
	c := startClient(t, client.NewClient(transport.NewIO(outR, inW, nil), client.WithProtocolVersion("2025-11-25")))
	return c, log
}

// An upstream whose variable is not set costs only itself: the gateway
// serves the others, a discovery that would need it says it is
// unavailable and why, the log warns, and doctor exits 1 naming it and
// the variable.
func TestUnsetVariableDisablesOnlyItsUpstream(t *testing.T) {
	cfg := writeFile(t, t.TempDir(), "p.yaml", `profiles:
  default:
    upstreams:
      calculator: {builtin: calculator}
      github:
        command: no-such-github-server
        env: {GITHUB_TOKEN: "${GH_TOKEN_NEVER_SET}"}
        description: Issues and pull requests of code repositories
`)
	c, log := serveStdioInProcess(t, nil, "--config", cfg, "--log-level", "info")
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	res, err := c.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "call_tool",
		Arguments: map[string]any{"name": "calculator_add", "arguments": map[string]any{"a": 2, "b": 3}}}})
	if err != nil || res.IsError {
		t.Fatalf("calculator_add through the gateway: %v %+v\n%s", err, res, log.String())
	}
	res, err = c.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "request_more_tools",
		Arguments: map[string]any{"query": "open a pull request for my change"}}})
	if err != nil {
		t.Fatal(err)
	}
	out, _ := json.Marshal(res)
	for _, w := range []string{"upstream_unavailable", "server github", "GH_TOKEN_NEVER_SET is not set"} {
		if !strings.Contains(string(out), w) {
			t.Errorf("the discovery lacks %q:\n%s", w, out)
		}
	}
	if strings.Contains(string(out), cfg) {
		t.Errorf("the model is shown the configuration's path:\n%s", out)
	}
	if strings.Contains(string(out), "profiles.yaml") { // the variable is set where mcp-router starts
		t.Errorf("the discovery sends the user to profiles.yaml for an unset variable:\n%s", out)
	}
	res, err = c.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "call_tool",
		Arguments: map[string]any{"name": "github_create_issue", "arguments": map[string]any{}}}})
	if out, _ := json.Marshal(res); err != nil || !res.IsError || !strings.Contains(string(out), "upstream_unavailable") ||
		!strings.Contains(string(out), "disabled") || !strings.Contains(string(out), "GH_TOKEN_NEVER_SET is not set") {
		t.Errorf("a call of a tool of the disabled upstream: %v %s, want upstream_unavailable saying why", err, out)
	}
	if got := strings.Count(log.String(), "upstream disabled"); got != 1 || !strings.Contains(log.String(), "GH_TOKEN_NEVER_SET") {
		t.Errorf("log: %d warnings of the disabled upstream, want one naming the variable:\n%s", got, log.String())
	}

	stdout, _, err := runCLI(t, nil, "doctor", "--config", cfg, "--log-level", "error")
	if err == nil || !strings.Contains(err.Error(), "github") || !strings.Contains(err.Error(), "GH_TOKEN_NEVER_SET") {
		t.Errorf("doctor: got %v, want an error naming github and GH_TOKEN_NEVER_SET", err)
	}
	for _, w := range []string{"github", "DISABLED", "p.yaml:7: profiles.default.upstreams.github.env.GITHUB_TOKEN", "set GH_TOKEN_NEVER_SET where mcp-router starts"} {
		if !strings.Contains(stdout, w) {
			t.Errorf("doctor's report lacks %q:\n%s", w, stdout)
		}
	}
}

// A profiles.yaml in the folder a client starts the gateway in is never
// read unless named: serve reads the user config directory's or the
// built-in default, says which, and says how to name the one it left.
func TestServeIgnoresTheWorkingDirectorysProfile(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir()) // no profile in the user config directory
	dir := t.TempDir()
	writeFile(t, dir, "profiles.yaml", "profiles:\n  default:\n    upstreams:\n      planted: {builtin: calculator}\n")
	t.Chdir(dir)
	c, log := serveStdioInProcess(t, nil, "--log-level", "info")
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	res, err := c.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "call_tool",
		Arguments: map[string]any{"name": "planted_add", "arguments": map[string]any{"a": 2, "b": 3}}}})
	if err == nil && !res.IsError {
		t.Errorf("a tool of ./profiles.yaml was served:\n%s", log.String())
	}
	for _, w := range []string{"file=\"(built-in default profiles.yaml)\"", "./profiles.yaml is not read unless named", "--config ./profiles.yaml"} {
		if !strings.Contains(log.String(), w) {
			t.Errorf("the log lacks %q:\n%s", w, log.String())
		}
	}

	named, log := serveStdioInProcess(t, nil, "--config", "profiles.yaml", "--log-level", "info")
	res, err = named.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "call_tool",
		Arguments: map[string]any{"name": "planted_add", "arguments": map[string]any{"a": 2, "b": 3}}}})
	if err != nil || res.IsError {
		t.Errorf("named with --config, ./profiles.yaml is not served: %v %+v\n%s", err, res, log.String())
	}
	if strings.Contains(log.String(), "is not read unless named") {
		t.Errorf("the file read is said to be unread:\n%s", log.String())
	}
}

// status (the gateway's snapshot) and the console read a disabled
// upstream, with its error, from the hub's status.
func TestDisabledUpstreamInStatusAndConsole(t *testing.T) {
	cause := errors.New("p.yaml:7: profiles.default.upstreams.github.env.GITHUB_TOKEN: environment variable GH_TOKEN is not set")
	hub := proxy.NewHub(proxy.Options{Disabled: []proxy.DisabledUpstream{{Name: "github", Err: cause, Reason: "environment variable GH_TOKEN is not set"}}})
	defer hub.Close()
	snap := snapshot(hub, proxy.NewMetrics())
	if len(snap.Upstreams) != 1 || snap.Upstreams[0].State != "disabled" || !strings.Contains(snap.Upstreams[0].Err, "GH_TOKEN is not set") {
		t.Errorf("status snapshot %+v, want github disabled with its error", snap.Upstreams)
	}
	ups, err := (&hubGateway{hub: hub}).Upstreams(t.Context())
	if err != nil || len(ups) != 1 || ups[0].State != "disabled" || ups[0].Restartable || !strings.Contains(ups[0].Err, "p.yaml:7") {
		t.Errorf("console upstreams %+v (%v), want github disabled, not restartable, with its error", ups, err)
	}
}
