package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-router/mcp-router/internal/fakeollama"
)

// approvalUpstream is a real MCP server over streamable HTTP that counts
// the calls it received per tool: wipe is destructive by its server's
// own hints (drop too, by destructiveHint alone), write_file is gated by
// a glob, read is neither.
type approvalUpstream struct {
	url   string
	calls sync.Map // tool -> *atomic.Int64
}

func newApprovalUpstream(t *testing.T) *approvalUpstream {
	t.Helper()
	u := &approvalUpstream{}
	srv := server.NewMCPServer("approval-upstream", "1")
	add := func(tool mcp.Tool) {
		srv.AddTool(tool, func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			n, _ := u.calls.LoadOrStore(tool.Name, new(atomic.Int64))
			n.(*atomic.Int64).Add(1)
			return mcp.NewToolResultText(tool.Name + " done: " + req.GetString("path", "")), nil
		})
	}
	add(mcp.NewTool("wipe", mcp.WithDescription("Wipe a disk"), mcp.WithString("path"),
		mcp.WithDestructiveHintAnnotation(true), mcp.WithIdempotentHintAnnotation(true), mcp.WithReadOnlyHintAnnotation(false)))
	add(mcp.NewTool("write_file", mcp.WithDescription("Write a file"), mcp.WithString("path"), mcp.WithString("token")))
	add(mcp.NewTool("read", mcp.WithDescription("Read a file"), mcp.WithString("path"), mcp.WithReadOnlyHintAnnotation(true)))
	// drop's server sends destructiveHint alone, as servers built on the
	// TypeScript SDK do (mcp-go's NewTool sends all four hints).
	add(mcp.Tool{Name: "drop", Description: "Drop a table", InputSchema: mcp.ToolInputSchema{Type: "object"},
		Annotations: mcp.ToolAnnotation{DestructiveHint: mcp.ToBoolPtr(true)}})
	hs := httptest.NewServer(server.NewStreamableHTTPServer(srv))
	t.Cleanup(hs.Close)
	u.url = hs.URL + "/mcp"
	return u
}

func (u *approvalUpstream) count(tool string) int64 {
	n, ok := u.calls.Load(tool)
	if !ok {
		return 0
	}
	return n.(*atomic.Int64).Load()
}

// approvalConfig is a profile whose upstream is u, with approvals of mode
// without_elicitation, and the audit file it writes.
func approvalConfig(t *testing.T, u *approvalUpstream, mode string) (cfg, auditFile string) {
	t.Helper()
	dir := t.TempDir()
	auditFile = filepath.Join(dir, "audit.jsonl")
	return writeFile(t, dir, "p.yaml", fmt.Sprintf(`audit: {file: %q}
profiles:
  default:
    upstreams:
      up: {url: %q}
    routing: {mode: all}
    approvals:
      destructive: true
      tools: ["up_write_*"]
      without_elicitation: %s
      timeout: 2s
`, auditFile, u.url, mode)), auditFile
}

// asker is a client's elicitation handler that answers with action and
// content, counting and keeping the questions.
type asker struct {
	mu        sync.Mutex
	questions []string
	answer    func(ctx context.Context) (*sdk.ElicitResult, error)
}

func (a *asker) handle(ctx context.Context, r *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
	a.mu.Lock()
	a.questions = append(a.questions, r.Params.Message)
	a.mu.Unlock()
	return a.answer(ctx)
}

func (a *asker) asked() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.questions...)
}

func answering(action string, content map[string]any) *asker {
	return &asker{answer: func(context.Context) (*sdk.ElicitResult, error) {
		return &sdk.ElicitResult{Action: action, Content: content}, nil
	}}
}

// gatedClient starts the gateway of cfg over stdio under a real client of
// the sessions era; with a nil asker the client does not declare
// elicitation.
func gatedClient(t *testing.T, cfg string, a *asker) *sdk.ClientSession {
	return gatedClientOf(t, cfg, a, sessionEra)
}

func gatedClientOf(t *testing.T, cfg string, a *asker, era string) *sdk.ClientSession {
	t.Helper()
	opts := &sdk.ClientOptions{}
	if a != nil {
		opts.ElicitationHandler = a.handle
	}
	cmd := execGateway(t, cfg)
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "approvals-test", Version: "1"}, opts).
		Connect(t.Context(), &sdk.CommandTransport{Command: cmd}, &sdk.ClientSessionOptions{ProtocolVersion: era})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func callText(t *testing.T, cs *sdk.ClientSession, tool string, args map[string]any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("calling %s: %v", tool, err)
	}
	return sdkText(res), res.IsError
}

var (
	approve = map[string]any{"approve": true}
	refuse  = map[string]any{"approve": false}
)

// A client that declares elicitation is asked before a destructive call:
// declined, cancelled or left unapproved, the upstream never sees the
// call and the model reads declined_by_user; approved, it goes on. A tool
// gated by a glob is asked about too; one that is neither is not.
func TestApprovalAsksTheClientBeforeADestructiveCall(t *testing.T) {
	u := newApprovalUpstream(t)
	cfg, _ := approvalConfig(t, u, "refuse")
	for _, tc := range []struct {
		name    string
		a       *asker
		allowed bool
	}{
		{"declined", answering("decline", nil), false},
		{"cancelled", answering("cancel", nil), false},
		{"accepted unapproved", answering("accept", refuse), false},
		{"accepted without the field", answering("accept", map[string]any{}), false},
		{"approved", answering("accept", approve), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := u.count("wipe")
			cs := gatedClient(t, cfg, tc.a)
			text, isErr := callText(t, cs, "up_wipe", map[string]any{"path": "/data", "api_key": "sk-live-0123456789abcdefghijklmnop"})
			asked := tc.a.asked()
			if len(asked) != 1 {
				t.Fatalf("the person was asked %d times, want 1", len(asked))
			}
			if q := asked[0]; !strings.Contains(q, "up_wipe") || !strings.Contains(q, "on up") || !strings.Contains(q, "/data") || strings.Contains(q, "sk-live") {
				t.Errorf("question %q: want the tool, its server and its arguments with the key redacted", q)
			}
			got := u.count("wipe") - before
			if tc.allowed {
				if isErr || got != 1 || !strings.Contains(text, "wipe done") {
					t.Errorf("approved: result %q (isError %v), upstream saw %d calls; want the call made once", text, isErr, got)
				}
				return
			}
			if !isErr || !strings.HasPrefix(text, "declined_by_user") || got != 0 {
				t.Errorf("got %q (isError %v), upstream saw %d calls; want declined_by_user and no call", text, isErr, got)
			}
		})
	}
	t.Run("glob-gated and ungated tools", func(t *testing.T) {
		a := answering("accept", approve)
		cs := gatedClient(t, cfg, a)
		if _, isErr := callText(t, cs, "up_read", map[string]any{"path": "x"}); isErr || len(a.asked()) != 0 {
			t.Errorf("an ungated tool: isError %v, asked %d times; want a call, no question", isErr, len(a.asked()))
		}
		if _, isErr := callText(t, cs, "up_write_file", map[string]any{"path": "x"}); isErr || len(a.asked()) != 1 || u.count("write_file") != 1 {
			t.Errorf("a tool up_write_* names: isError %v, asked %d times, upstream saw %d; want asked once, called once", isErr, len(a.asked()), u.count("write_file"))
		}
	})
}

// A client without elicitation is refused with approval_unavailable,
// naming the key; nothing the model sends (an approve argument, a _meta)
// approves the call.
func TestApprovalUnavailableWithoutElicitation(t *testing.T) {
	u := newApprovalUpstream(t)
	cfg, _ := approvalConfig(t, u, "refuse")
	cs := gatedClient(t, cfg, nil)
	res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "up_wipe",
		Arguments: map[string]any{"path": "/", "approve": true}, Meta: sdk.Meta{"approve": true, "approved": true}})
	if err != nil {
		t.Fatal(err)
	}
	text := sdkText(res)
	if !res.IsError || !strings.HasPrefix(text, "approval_unavailable") || !strings.Contains(text, "approvals.without_elicitation") {
		t.Errorf("got %q (isError %v), want approval_unavailable naming approvals.without_elicitation", text, res.IsError)
	}
	text, _ = callText(t, cs, "call_tool", map[string]any{"name": "up_wipe", "arguments": map[string]any{"approve": true}})
	if !strings.Contains(text, "approval_unavailable") {
		t.Errorf("call_tool: got %q, want approval_unavailable", text)
	}
	text, _ = callText(t, cs, "run_plan", map[string]any{"steps": []any{map[string]any{"id": "a", "tool": "up_wipe", "args": map[string]any{}}},
		"approved": []any{"a"}})
	if u.count("wipe") != 0 {
		t.Errorf("a plan that says approved: %q; the upstream saw %d calls, want none", text, u.count("wipe"))
	}
}

// SEC-12: a tool whose server sends destructiveHint: true and no other
// hint is destructive: approvals.destructive gates it.
func TestApprovalGatesDestructiveHintAlone(t *testing.T) {
	u := newApprovalUpstream(t)
	cfg, _ := approvalConfig(t, u, "refuse")
	cs := gatedClient(t, cfg, nil)
	text, isErr := callText(t, cs, "up_drop", map[string]any{})
	if !isErr || !strings.HasPrefix(text, "approval_unavailable") || u.count("drop") != 0 {
		t.Errorf("got %q (isError %v), upstream saw %d calls; want approval_unavailable and no call", text, isErr, u.count("drop"))
	}
}

// No answer within the deadline is approval_timeout, and no call.
func TestApprovalTimesOut(t *testing.T) {
	u := newApprovalUpstream(t)
	cfg, _ := approvalConfig(t, u, "refuse")
	release := make(chan struct{})
	a := &asker{answer: func(ctx context.Context) (*sdk.ElicitResult, error) {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-release:
			return &sdk.ElicitResult{Action: "accept", Content: approve}, nil // too late
		}
	}}
	cs := gatedClient(t, cfg, a)
	defer close(release)
	text, isErr := callText(t, cs, "up_wipe", map[string]any{"path": "/"})
	if !isErr || !strings.HasPrefix(text, "approval_timeout") || u.count("wipe") != 0 {
		t.Errorf("got %q (isError %v), upstream saw %d; want approval_timeout and no call", text, isErr, u.count("wipe"))
	}
}

// call_tool meets the gate as a direct call does.
func TestApprovalGatesCallTool(t *testing.T) {
	u := newApprovalUpstream(t)
	cfg, _ := approvalConfig(t, u, "refuse")
	a := answering("decline", nil)
	cs := gatedClient(t, cfg, a)
	text, _ := callText(t, cs, "call_tool", map[string]any{"name": "up_wipe", "arguments": map[string]any{"path": "/"}})
	if !strings.Contains(text, "declined_by_user") || u.count("wipe") != 0 || len(a.asked()) != 1 {
		t.Errorf("call_tool declined: %q, upstream saw %d, asked %d; want declined_by_user, no call, one question", text, u.count("wipe"), len(a.asked()))
	}
}

// A plan with two gated steps asks once, listing both, its later step's
// reference shown as such; approved, both run; declined, neither does.
func TestApprovalAsksOncePerPlan(t *testing.T) {
	u := newApprovalUpstream(t)
	cfg, auditFile := approvalConfig(t, u, "refuse")
	plan := map[string]any{"steps": []any{
		map[string]any{"id": "w", "tool": "up_wipe", "args": map[string]any{"path": "/tmp/a"}},
		map[string]any{"id": "f", "tool": "up_write_file", "args": map[string]any{"path": "$<<w>>"}},
		map[string]any{"id": "r", "tool": "up_read", "args": map[string]any{"path": "/tmp/b"}},
	}}

	a := answering("decline", nil)
	cs := gatedClient(t, cfg, a)
	text, isErr := callText(t, cs, "run_plan", plan)
	if !isErr || !strings.HasPrefix(text, "declined_by_user") || u.count("wipe")+u.count("write_file")+u.count("read") != 0 {
		t.Errorf("declined plan: %q; want declined_by_user and no step run (upstream: wipe %d, write %d, read %d)", text, u.count("wipe"), u.count("write_file"), u.count("read"))
	}

	a = answering("accept", approve)
	cs = gatedClient(t, cfg, a)
	text, isErr = callText(t, cs, "run_plan", plan)
	if isErr || u.count("wipe") != 1 || u.count("write_file") != 1 || u.count("read") != 1 {
		t.Errorf("approved plan: %q; want every step run once (upstream: wipe %d, write %d, read %d)", text, u.count("wipe"), u.count("write_file"), u.count("read"))
	}
	asked := a.asked()
	if len(asked) != 1 {
		t.Fatalf("the person was asked %d times for one plan, want once: %q", len(asked), asked)
	}
	for _, want := range []string{"step w: up_wipe on up", "step f: up_write_file on up", "$<<w>>"} {
		if !strings.Contains(asked[0], want) {
			t.Errorf("the question %q does not name %q", asked[0], want)
		}
	}
	if strings.Contains(asked[0], "up_read") {
		t.Errorf("the question %q names the ungated step", asked[0])
	}
	cs.Close()
	wants := []string{`"outcome":"declined_by_user"`, `"approval":"approved_with_plan"`, `"outcome":"plan_approved"`}
	records := readAudit(t, auditFile, wants...)
	for _, want := range wants {
		if !strings.Contains(records, want) {
			t.Errorf("the audit records lack %s:\n%s", want, records)
		}
	}
}

// readAudit waits, within a bound, for the audit file to hold every one
// of wants: each gateway that wrote to it writes its records as it exits,
// and the two gateways of a test exit in no set order.
func readAudit(t *testing.T, path string, wants ...string) string {
	t.Helper()
	deadline := time.NewTimer(10 * time.Second)
	defer deadline.Stop()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		b, _ := os.ReadFile(path)
		if !slices.ContainsFunc(wants, func(w string) bool { return !strings.Contains(string(b), w) }) {
			return string(b)
		}
		select {
		case <-deadline.C:
			return string(b)
		case <-tick.C:
		}
	}
}

// execGateway is the command of a stdio gateway of cfg.
func execGateway(t *testing.T, cfg string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(buildBinary(t), "serve", "--config", cfg)
	cmd.Env = isolatedEnv(t.TempDir())
	return cmd
}

// TestApprovalsInTheConsoleBrowser: with without_elicitation: console, a
// gateway over HTTP holds two calls of a client without elicitation until
// an administrator answers in the console's Approvals page in Chromium:
// the approved call reaches the upstream, the declined one does not.
func TestApprovalsInTheConsoleBrowser(t *testing.T) {
	chromium, modules := consoleBrowser(t)
	node := nodeIn(t, modules)
	bin := buildBinary(t)
	u := newApprovalUpstream(t)
	dir := t.TempDir()
	cfg := writeFile(t, dir, "p.yaml", fmt.Sprintf(`state_dir: %q
http: {tokens: [{token: %q, admin: true}]}
profiles:
  default:
    upstreams:
      up: {url: %q}
    routing: {mode: all}
    approvals: {destructive: true, tools: ["up_write_*"], without_elicitation: console, timeout: 90s}
`, filepath.Join(dir, "state"), consoleToken, u.url))
	base := startProcess(t, regexp.MustCompile(`url=(http://\S+)/mcp`), bin, "serve", "--http", "127.0.0.1:0", "--config", cfg)

	wiped, written := make(chan consoleAnswer, 1), make(chan consoleAnswer, 1)
	go callWithoutElicitation(t, base, consoleToken, "up_wipe", map[string]any{"path": "/data", "api_key": "sk-live-0123456789abcdefghijklmnop"}, wiped)
	go callWithoutElicitation(t, base, consoleToken, "up_write_file", map[string]any{"path": "/etc/motd"}, written)

	shots, _ := filepath.Abs(filepath.Join("..", "..", "artifacts", "console"))
	if err := os.MkdirAll(shots, 0o755); err != nil {
		t.Fatal(err)
	}
	script, _ := filepath.Abs(filepath.Join("..", "..", "console", "testdata", "approvals.mjs"))
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, script)
	cmd.Env = append(os.Environ(), "CONSOLE_URL="+base+"/ui", "CONSOLE_TOKEN="+consoleToken, "SHOTS="+shots,
		"CHROMIUM="+chromium, "APPROVE_TOOL=up_wipe", "DECLINE_TOOL=up_write_file")
	out, err := cmd.CombinedOutput()
	t.Logf("browser:\n%s", out)
	if err != nil {
		t.Fatalf("browser script: %v", err)
	}
	w, f := <-wiped, <-written
	if w.err != nil || w.isErr || !strings.Contains(w.text, "wipe done") || u.count("wipe") != 1 {
		t.Errorf("approved in the console: %+v, upstream saw %d; want the call made once", w, u.count("wipe"))
	}
	if f.err != nil || !f.isErr || !strings.HasPrefix(f.text, "declined_by_user") || u.count("write_file") != 0 {
		t.Errorf("declined in the console: %+v, upstream saw %d; want declined_by_user and no call", f, u.count("write_file"))
	}
}

// A client of the stateless era is asked in a round of its own request:
// declined, the upstream never sees the call; approved, it does, once; a
// plan with two gated steps asks once.
func TestApprovalAsksAStatelessClientInARound(t *testing.T) {
	u := newApprovalUpstream(t)
	cfg, _ := approvalConfig(t, u, "refuse")

	a := answering("decline", nil)
	cs := gatedClientOf(t, cfg, a, statelessEra)
	text, isErr := callText(t, cs, "up_wipe", map[string]any{"path": "/data"})
	if !isErr || !strings.HasPrefix(text, "declined_by_user") || u.count("wipe") != 0 || len(a.asked()) != 1 {
		t.Errorf("declined: %q (isError %v), upstream saw %d, asked %d; want declined_by_user, no call, one question", text, isErr, u.count("wipe"), len(a.asked()))
	}

	a = answering("accept", approve)
	cs = gatedClientOf(t, cfg, a, statelessEra)
	text, isErr = callText(t, cs, "up_wipe", map[string]any{"path": "/data"})
	if isErr || u.count("wipe") != 1 || len(a.asked()) != 1 || !strings.Contains(a.asked()[0], "up_wipe on up") {
		t.Errorf("approved: %q (isError %v), upstream saw %d, asked %q; want the call made once after one question", text, isErr, u.count("wipe"), a.asked())
	}
	text, isErr = callText(t, cs, "run_plan", map[string]any{"steps": []any{
		map[string]any{"id": "w", "tool": "up_wipe", "args": map[string]any{"path": "/b"}},
		map[string]any{"id": "f", "tool": "up_write_file", "args": map[string]any{"path": "$<<w>>"}},
	}})
	if isErr || u.count("wipe") != 2 || u.count("write_file") != 1 || len(a.asked()) != 2 {
		t.Errorf("plan: %q (isError %v), upstream saw wipe %d write %d, asked %d times in all; want both steps run after one more question", text, isErr, u.count("wipe"), u.count("write_file"), len(a.asked()))
	}
}

// Over streamable HTTP the question goes on the call's own response
// stream: a session-era client that declines stops the call; one that
// approves lets it on.
func TestApprovalAsksOverHTTP(t *testing.T) {
	bin := buildBinary(t)
	u := newApprovalUpstream(t)
	dir := t.TempDir()
	cfg := writeFile(t, dir, "p.yaml", fmt.Sprintf(`state_dir: %q
http: {tokens: [{token: %q}]}
profiles:
  default:
    upstreams:
      up: {url: %q}
    routing: {mode: all}
    approvals: {destructive: true}
`, filepath.Join(dir, "state"), consoleToken, u.url))
	base := startProcess(t, regexp.MustCompile(`url=(http://\S+)/mcp`), bin, "serve", "--http", "127.0.0.1:0", "--config", cfg)
	for _, tc := range []struct {
		a     *asker
		calls int64
	}{{answering("decline", nil), 0}, {answering("accept", approve), 1}} {
		cl := sdk.NewClient(&sdk.Implementation{Name: "approvals-http", Version: "1"}, &sdk.ClientOptions{ElicitationHandler: tc.a.handle})
		s, err := cl.Connect(t.Context(), &sdk.StreamableClientTransport{Endpoint: base + "/mcp", MaxRetries: -1,
			HTTPClient: &http.Client{Transport: tokenTransport{consoleToken}}}, &sdk.ClientSessionOptions{ProtocolVersion: sessionEra})
		if err != nil {
			t.Fatal(err)
		}
		text, _ := callText(t, s, "up_wipe", map[string]any{"path": "/srv"})
		s.Close()
		if len(tc.a.asked()) != 1 || u.count("wipe") != tc.calls {
			t.Errorf("%q: asked %d times, upstream saw %d; want one question and %d calls", text, len(tc.a.asked()), u.count("wipe"), tc.calls)
		}
	}
}

// without_elicitation: console on a gateway that serves no console (over
// stdio) refuses at once, saying so, rather than waiting for no one;
// allow lets the call on unasked.
func TestApprovalWithoutElicitationModesOverStdio(t *testing.T) {
	u := newApprovalUpstream(t)
	cfg, _ := approvalConfig(t, u, "console")
	text, isErr := callText(t, gatedClient(t, cfg, nil), "up_wipe", map[string]any{"path": "/"})
	if !isErr || !strings.HasPrefix(text, "approval_unavailable") || !strings.Contains(text, "serves no console") || u.count("wipe") != 0 {
		t.Errorf("console over stdio: %q, upstream saw %d; want approval_unavailable saying no console is served, and no call", text, u.count("wipe"))
	}
	cfg, _ = approvalConfig(t, u, "allow")
	text, isErr = callText(t, gatedClient(t, cfg, nil), "up_wipe", map[string]any{"path": "/"})
	if isErr || u.count("wipe") != 1 {
		t.Errorf("allow: %q, upstream saw %d; want the call made", text, u.count("wipe"))
	}
}

// The plan tool with execute asks a stateless-era client once, in a round,
// and runs its plan after the answer, as run_plan does.
func TestApprovalPlanToolAsksAStatelessClientOnce(t *testing.T) {
	u := newApprovalUpstream(t)
	var planned atomic.Int64 // a model words each plan its own way
	fo := fakeollama.New(fakeollama.Options{Chat: func(fakeollama.ChatRequest) (string, error) {
		return fmt.Sprintf(`{"decision":"USE_TOOL","confidence":0.9,"reasoning":"wipe then write",`+
			`"plan":{"steps":[{"id":"w","tool":"up_wipe","args":{"path":"/b"},"purpose":"wipe, take %d"},`+
			`{"id":"f","tool":"up_write_file","args":{"path":"$<<w>>"}}]}}`, planned.Add(1)), nil
	}})
	t.Cleanup(fo.Close)
	cfg, _ := approvalConfig(t, u, "refuse")
	b, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg = writeFile(t, filepath.Dir(cfg), "p.yaml", fmt.Sprintf("ollama: {url: %q, chat_model: test-model}\n%s", fo.URL(), b))
	a := answering("accept", approve)
	cs := gatedClientOf(t, cfg, a, statelessEra)
	text, isErr := callText(t, cs, "plan", map[string]any{"query": "wipe /b and write the result", "execute": true,
		"tools": []any{"up_wipe", "up_write_file"}})
	if isErr || u.count("wipe") != 1 || u.count("write_file") != 1 || len(a.asked()) != 1 {
		t.Errorf("plan: %q (isError %v), upstream saw wipe %d write %d, asked %d times; want both steps run after one question", text, isErr, u.count("wipe"), u.count("write_file"), len(a.asked()))
	}
	if planned.Load() != 1 {
		t.Errorf("the planner was asked %d times, want once: the retry runs the plan the person approved", planned.Load())
	}
}
