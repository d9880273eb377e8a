package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcp-router/mcp-router/internal/fakeupstream"
	"github.com/mcp-router/mcp-router/proxy"
	"github.com/mcp-router/mcp-router/routing/lessons"
	"github.com/mcp-router/mcp-router/state"
)

// runCLI runs the program in-process with the given arguments and no
// environment but vars.
func runCLI(t *testing.T, vars map[string]string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errb bytes.Buffer
	e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(k string) (string, bool) {
		v, ok := vars[k]
		return v, ok
	}}
	root := newRootCmd(e)
	root.SetArgs(args)
	root.SetOut(&out)
	root.SetErr(&errb)
	err = root.ExecuteContext(t.Context())
	if cerr := e.closeState(); err == nil && cerr != nil {
		err = cerr
	}
	return out.String(), errb.String(), err
}

const calcProfile = "profiles:\n  default:\n    upstreams:\n      calculator: {builtin: calculator}\n"

func TestToolsJSONListsTheCatalog(t *testing.T) {
	cfg := writeFile(t, t.TempDir(), "p.yaml", calcProfile)
	out, _, err := runCLI(t, nil, "tools", "--json", "--config", cfg, "--log-level", "error")
	if err != nil {
		t.Fatal(err)
	}
	var tools []struct {
		Name, Upstream, Description string
		InputSchema                 map[string]any `json:"input_schema"`
	}
	if err := json.Unmarshal([]byte(out), &tools); err != nil {
		t.Fatalf("tools --json printed %q: %v", out, err)
	}
	if len(tools) != 17 {
		t.Fatalf("got %d tools, want the calculator's 17", len(tools))
	}
	for _, tool := range tools {
		if !strings.HasPrefix(tool.Name, "calculator_") || tool.Upstream != "calculator" || tool.Description == "" || tool.InputSchema["type"] != "object" {
			t.Errorf("tool %+v: want a calculator_ name, upstream, description and object schema", tool)
		}
	}
	table, _, err := runCLI(t, nil, "tools", "--config", cfg, "--log-level", "error")
	if err != nil || !strings.Contains(table, "calculator_divide") || !strings.Contains(table, "17 tools") {
		t.Errorf("tools table: %v\n%s", err, table)
	}
}

func TestCallPrintsTheResult(t *testing.T) {
	cfg := writeFile(t, t.TempDir(), "p.yaml", calcProfile)
	out, _, err := runCLI(t, nil, "call", "calculator_divide", "--args", `{"a": 7, "b": 2}`, "--config", cfg, "--log-level", "error")
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		StructuredContent struct{ Result float64 } `json:"structuredContent"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || res.StructuredContent.Result != 3.5 {
		t.Errorf("got %q (%v), want result 3.5", out, err)
	}
	out, _, err = runCLI(t, nil, "call", "calculator_divide", "--args", `{"a": 1, "b": 0}`, "--config", cfg, "--log-level", "error")
	if err == nil || !strings.Contains(out, `"isError": true`) {
		t.Errorf("divide by zero: got %v and %q, want an error and an isError result", err, out)
	}
	if _, _, err := runCLI(t, nil, "call", "calculator_add", "--args", `[1]`, "--config", cfg); err == nil || !strings.Contains(err.Error(), "--args") {
		t.Errorf("bad --args: got %v, want an error naming --args", err)
	}
	if _, _, err := runCLI(t, nil, "call", "nope_tool", "--config", cfg, "--log-level", "error"); err == nil || !strings.Contains(err.Error(), "nope_tool") {
		t.Errorf("unknown tool: got %v, want an error naming it", err)
	}
}

// call exits 0 when the call succeeded, though another upstream of the
// profile failed to connect: that is a warning on stderr. A failed call
// still exits 1, and names the upstream not connected too.
func TestCallSucceedsBesideAnUpstreamThatFailed(t *testing.T) {
	cfg := writeFile(t, t.TempDir(), "p.yaml", calcProfile+`      weather: {command: sh, args: ["-c", "exit 1"]}
`)
	out, errOut, err := runCLI(t, nil, "call", "calculator_add", "--args", `{"a": 2, "b": 3}`, "--config", cfg, "--log-level", "error")
	if err != nil || !strings.Contains(out, `"result": 5`) {
		t.Errorf("call beside a failed upstream: got %v and %q, want success and result 5", err, out)
	}
	if !strings.Contains(errOut, "warning: 1 of 2 upstreams not connected: weather") {
		t.Errorf("stderr %q, want a warning naming weather", errOut)
	}
	_, _, err = runCLI(t, nil, "call", "calculator_divide", "--args", `{"a": 1, "b": 0}`, "--config", cfg, "--log-level", "error")
	if err == nil || !strings.Contains(err.Error(), "returned an error") || !strings.Contains(err.Error(), "weather") {
		t.Errorf("a failed call beside a failed upstream: got %v, want the tool's error and weather named", err)
	}
}

func TestConfigErrorsReachTheUser(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name, yaml string
		want       []string
	}{
		{"unknown key", "profiles:\n  default:\n    upstreams:\n      calc: {biultin: calculator}\n",
			[]string{"p.yaml:4:", "profiles.default.upstreams.calc.biultin", `did you mean "builtin"`}},
		{"missing variable", "profiles:\n  default:\n    upstreams:\n      x: {url: 'https://h/${MISSING_HOST_VAR}'}\n",
			[]string{"p.yaml:4:", "upstreams.x.url", "MISSING_HOST_VAR is not set"}},
		{"same exposed name", "profiles:\n  default:\n    upstreams:\n      a: {builtin: calculator, prefix: ''}\n      b: {builtin: calculator, prefix: ''}\n",
			[]string{"p.yaml:5:", "profiles.default.upstreams.b", `"add"`, "upstream a and upstream b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := writeFile(t, dir, "p.yaml", tt.yaml)
			_, _, err := runCLI(t, nil, "tools", "--config", cfg, "--log-level", "error")
			for _, w := range tt.want {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("got %v, want it to contain %q", err, w)
				}
			}
		})
	}
}

func TestImportClaudeDesktopCommand(t *testing.T) {
	in := writeFile(t, t.TempDir(), "claude.json", `{"mcpServers": {"memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]}}}`)
	out, _, err := runCLI(t, nil, "import", "claude-desktop", in)
	if err != nil {
		t.Fatal(err)
	}
	cfg := writeFile(t, t.TempDir(), "profiles.yaml", out)
	if _, _, err := runCLI(t, nil, "import", "claude-desktop", filepath.Join(t.TempDir(), "none.json")); err == nil {
		t.Error("a missing file: got no error")
	}
	// What import printed loads as a configuration.
	e := &env{getenv: func(string) (string, bool) { return "", false }, configPath: cfg}
	if _, prof, err := e.loadConfig(); err != nil || len(prof.Upstreams) != 1 || prof.Upstreams[0].Command != "npx" {
		t.Errorf("loading the import: %v %+v", err, prof)
	}
}

func TestEveryCommandHasHelp(t *testing.T) {
	for _, cmd := range [][]string{{"serve"}, {"tools"}, {"call"}, {"builtin"}, {"import", "claude-desktop"}, {"version"}} {
		out, _, err := runCLI(t, nil, append(cmd, "--help")...)
		if err != nil || !strings.Contains(out, "Usage:") {
			t.Errorf("%v --help: %v\n%s", cmd, err, out)
		}
	}
	out, _, err := runCLI(t, nil, "version")
	if err != nil || !strings.HasPrefix(out, "mcp-router ") {
		t.Errorf("version: %v %q", err, out)
	}
}

// TestServeStdioWritesOnlyJSONRPC runs the real binary as a client does,
// with a chatty stdio upstream child and debug logging, and checks that
// every line on stdout is a JSON-RPC message.
func TestServeStdioWritesOnlyJSONRPC(t *testing.T) {
	bin := buildBinary(t)
	exe, _ := fakeupstream.Command("chatty")
	cfg := writeFile(t, t.TempDir(), "p.yaml", fmt.Sprintf(
		"profiles:\n  default:\n    upstreams:\n      calculator: {builtin: calculator}\n      chatty: {command: %q, env: {%s: chatty}}\n",
		exe, fakeupstream.EnvVar))
	cmd := exec.Command(bin, "serve", "--config", cfg, "--log-level", "debug")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })

	lines := make(chan string, 100)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	send := func(msg string) { io.WriteString(stdin, msg+"\n") }
	seen := map[float64]bool{}
	timeout := time.After(30 * time.Second)
	// await reads answers until the one with id arrives, checking every line.
	await := func(id float64) {
		t.Helper()
		for !seen[id] {
			select {
			case line, ok := <-lines:
				if !ok {
					t.Fatalf("stdout closed early; stderr:\n%s", stderr.String())
				}
				var msg struct {
					JSONRPC string          `json:"jsonrpc"`
					ID      *float64        `json:"id"`
					Result  json.RawMessage `json:"result"`
				}
				if err := json.Unmarshal([]byte(line), &msg); err != nil || msg.JSONRPC != "2.0" {
					t.Fatalf("stdout line is not JSON-RPC: %q", line)
				}
				if msg.ID != nil {
					seen[*msg.ID] = true
				}
				if msg.ID != nil && *msg.ID == 3 && !strings.Contains(string(msg.Result), `"result":5`) {
					t.Errorf("call_tool calculator_add: got %s, want result 5", msg.Result)
				}
			case <-timeout:
				t.Fatalf("no answer to every request; saw %v; stderr:\n%s", seen, stderr.String())
			}
		}
	}
	// As the spec has it, the client waits for initialize's answer before
	// anything but ping (requests before it are refused, BI-10).
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	await(1)
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"call_tool","arguments":{"name":"calculator_add","arguments":{"a":2,"b":3}}}}`)
	send(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"call_tool","arguments":{"name":"chatty_echo","arguments":{"text":"hi"}}}}`)
	send(`this is not json`)
	send(`{"jsonrpc":"2.0","id":5,"method":"ping"}`)
	for id := 2; id <= 5; id++ {
		await(float64(id))
	}
	stdin.Close() // the client goes away: the gateway exits cleanly
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("serve exited with %v; stderr:\n%s", err, stderr.String())
		}
	case <-time.After(15 * time.Second):
		t.Fatal("serve did not exit after stdin closed")
	}
	if !strings.Contains(stderr.String(), "upstream connected upstream=chatty") {
		t.Errorf("stderr lacks the upstream's report:\n%s", stderr.String())
	}
}

// TestServeStdioAnswersRequestsSentWithInitialize: a client that writes
// initialize, notifications/initialized and tools/list in one go, as many
// servers' READMEs show, gets tools/list answered after initialize, not
// refused (BI-10 refuses only what comes before initialize).
func TestServeStdioAnswersRequestsSentWithInitialize(t *testing.T) {
	bin := buildBinary(t)
	cfg := writeFile(t, t.TempDir(), "p.yaml", calcProfile)
	cmd := exec.Command(bin, "serve", "--config", cfg, "--log-level", "error")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	io.WriteString(stdin, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`+"\n"+
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"+
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`+"\n")
	lines := make(chan string, 2)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var got []string
	timeout := time.After(30 * time.Second)
	for len(got) < 2 {
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatalf("stdout closed after %q; stderr:\n%s", got, stderr.String())
			}
			got = append(got, line)
		case <-timeout:
			t.Fatalf("got %q only; stderr:\n%s", got, stderr.String())
		}
	}
	if !strings.HasPrefix(got[0], `{"jsonrpc":"2.0","id":1,"result":`) || !strings.HasPrefix(got[1], `{"jsonrpc":"2.0","id":2,"result":{"tools":[`) {
		t.Errorf("got %.200q, want initialize's result, then tools/list's", got)
	}
	stdin.Close()
}

func TestServeRefusesAnOpenAddressWithoutTokens(t *testing.T) {
	cfg := writeFile(t, t.TempDir(), "p.yaml", calcProfile)
	_, _, err := runCLI(t, nil, "serve", "--http", "0.0.0.0:0", "--config", cfg, "--log-level", "error")
	if err == nil || !strings.Contains(err.Error(), "bearer_tokens") {
		t.Errorf("serve --http 0.0.0.0:0 without tokens: got %v, want a refusal naming http.bearer_tokens", err)
	}
}

func TestPinsListAndApprove(t *testing.T) {
	dir := t.TempDir()
	cfg := writeFile(t, dir, "p.yaml", fmt.Sprintf("state_dir: %q\n%s", filepath.Join(dir, "state"), calcProfile))
	if _, _, err := runCLI(t, nil, "tools", "--config", cfg, "--log-level", "error"); err != nil {
		t.Fatal(err)
	}
	out, _, err := runCLI(t, nil, "pins", "list", "--config", cfg)
	if err != nil || !strings.Contains(out, "calculator") || !strings.Contains(out, "divide") {
		t.Fatalf("pins list after a first connect: %v\n%s", err, out)
	}
	if out, _, err := runCLI(t, nil, "pins", "approve", "calculator_divide", "--config", cfg); err != nil || !strings.Contains(out, "approved calculator_divide") {
		t.Errorf("pins approve: %v %q", err, out)
	}
	if out, _, _ := runCLI(t, nil, "pins", "list", "--config", cfg); !strings.Contains(out, "approved") {
		t.Errorf("pins list does not show the approval:\n%s", out)
	}
	if _, _, err := runCLI(t, nil, "pins", "approve", "calculator_nope", "--config", cfg); err == nil {
		t.Error("approving an unknown tool: got no error")
	}
}

func TestLessonsCommands(t *testing.T) {
	dir := t.TempDir()
	cfg := writeFile(t, dir, "p.yaml", fmt.Sprintf("state_dir: %q\n%s", filepath.Join(dir, "state"), calcProfile))
	l := learnSplitTheBill(t, filepath.Join(dir, "state"))
	out, _, err := runCLI(t, nil, "lessons", "list", "--config", cfg)
	if err != nil || !strings.Contains(out, "calculator_divide") || !strings.Contains(out, "split the bill") {
		t.Fatalf("lessons list: %v\n%s", err, out)
	}
	if out, _, err := runCLI(t, nil, "lessons", "forget", fmt.Sprint(l.ID), "--config", cfg); err != nil || !strings.Contains(out, "forgot lesson") {
		t.Errorf("lessons forget: %v %q", err, out)
	}
	if out, _, err := runCLI(t, nil, "lessons", "clear", "--config", cfg); err != nil || !strings.Contains(out, "forgot 0 lessons") {
		t.Errorf("lessons clear: %v %q", err, out)
	}
}

// learnSplitTheBill records, in the state.db of stateDir, the lesson that
// "split the bill" is served by calculator_divide, and returns it.
func learnSplitTheBill(t *testing.T, stateDir string) lessons.Lesson {
	t.Helper()
	db, err := state.Open(t.Context(), state.Options{Dir: stateDir})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	mem, _ := lessons.NewMemory(t.Context(), db.Lessons(), lessons.MemoryOptions{})
	l, err := mem.Learn(t.Context(), lessons.Lesson{Query: "split the bill", Tool: "calculator_divide", Polarity: lessons.Use, Source: lessons.SourceFeedback})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// The tools table ends with what was left out and what was flagged, so a
// profile's collisions and look-alike names show where the user looks.
func TestToolsTableShowsProblemsAndWarnings(t *testing.T) {
	var out strings.Builder
	c := &proxy.Catalog{
		Tools:    []proxy.Tool{{Name: "a_search", Upstream: "a"}, {Name: "b_Search", Upstream: "b"}},
		Problems: []proxy.Problem{{Text: `tool "x_search" of upstream c clashes with upstream a`, Collision: true}},
		Warnings: []proxy.Problem{{Text: `"a_search" (upstream a) and "b_Search" (upstream b) differ only in case`}},
	}
	if err := printToolsTable(&out, c); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"2 tools", "left out: " + c.Problems[0].Text, "warning: " + c.Warnings[0].Text} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}
}

// route applies the lessons serve has learned, as request_more_tools
// would, and shows what they added.
func TestRouteAppliesLessons(t *testing.T) {
	dir := t.TempDir()
	cfg := writeFile(t, dir, "p.yaml", fmt.Sprintf("state_dir: %q\n%s", filepath.Join(dir, "state"), calcProfile))
	learnSplitTheBill(t, filepath.Join(dir, "state"))
	out, _, err := runCLI(t, nil, "route", "split", "the", "bill", "--json", "--config", cfg, "--log-level", "error")
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Tools []struct {
			Name   string
			Lesson float64
		}
		Selected []string
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("route --json printed %q: %v", out, err)
	}
	if len(v.Tools) == 0 || v.Tools[0].Name != "calculator_divide" || v.Tools[0].Lesson <= 0 {
		t.Errorf("route ranked %+v, want calculator_divide first, raised by its lesson", v.Tools)
	}
	if !slices.Contains(v.Selected, "calculator_divide") {
		t.Errorf("selected %v, want calculator_divide", v.Selected)
	}
}

// DEBUG_WIRE_LOG=true logs the routing trace whatever the log level.
func TestWireLogShowsAtAnyLevel(t *testing.T) {
	cfg := writeFile(t, t.TempDir(), "p.yaml", calcProfile)
	for _, tc := range []struct {
		vars map[string]string
		want bool
	}{{map[string]string{"DEBUG_WIRE_LOG": "true"}, true}, {nil, false}} {
		_, stderr, err := runCLI(t, tc.vars, "route", "add", "two", "numbers", "--config", cfg, "--log-level", "error")
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(stderr, "routing decision"); got != tc.want {
			t.Errorf("env %v at log level error: trace logged %v, want %v; stderr:\n%s", tc.vars, got, tc.want, stderr)
		}
	}
}
