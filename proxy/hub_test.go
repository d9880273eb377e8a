package proxy

import (
	"cmp"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"go.uber.org/goleak"

	"github.com/mcp-router/mcp-router/internal/fakeupstream"
	"github.com/mcp-router/mcp-router/proxy/call"
)

func TestMain(m *testing.M) {
	fakeupstream.MaybeRun()
	goleak.VerifyTestMain(m)
}

// stdioFake is an upstream config that runs a fake upstream as a child.
func stdioFake(name string) UpstreamConfig {
	cmd, env := fakeupstream.Command(name)
	return UpstreamConfig{Name: name, Transport: TransportStdio, Command: cmd, Env: env, Prefix: name + "_"}
}

// builtinFake is an upstream config served in-process by fakeBuiltins.
func builtinFake(name string) UpstreamConfig {
	return UpstreamConfig{Name: name, Transport: TransportBuiltin, Builtin: name, Prefix: name + "_"}
}

func fakeBuiltins(name string, _ []string) (*server.MCPServer, error) {
	return fakeupstream.New(name), nil
}

// newTestHub is how every test builds a hub: opts with the reserved
// names, and fast retries and short waits where opts leaves them zero;
// closed when the test ends. It does not start the hub (see startHubWith).
func newTestHub(t testing.TB, opts Options) *Hub {
	t.Helper()
	if opts.Reserved == nil {
		opts.Reserved = ReservedNames()
	}
	opts.InitTimeout = cmp.Or(opts.InitTimeout, 5*time.Second)
	opts.BackoffMin = cmp.Or(opts.BackoffMin, 20*time.Millisecond)
	opts.BackoffMax = cmp.Or(opts.BackoffMax, 200*time.Millisecond)
	opts.RefreshDebounce = cmp.Or(opts.RefreshDebounce, 20*time.Millisecond)
	h := NewHub(opts)
	t.Cleanup(func() { h.Close() })
	return h
}

// startHubWith builds a hub with newTestHub and starts it; a hub that does
// not start fails the test.
func startHubWith(t testing.TB, opts Options) *Hub {
	t.Helper()
	h := newTestHub(t, opts)
	if err := h.Start(t.Context()); err != nil {
		t.Fatalf("Start: %v", err)
	}
	return h
}

// startHub is startHubWith the fake builtins and these upstreams.
func startHub(t testing.TB, ups ...UpstreamConfig) *Hub {
	t.Helper()
	return startHubWith(t, Options{Upstreams: ups, Builtin: fakeBuiltins})
}

// eventually polls cond until it holds, and fails once the timeout, or
// eventuallyAtLeast if that is longer, passes: the wait is a guard against
// a condition that never comes, never a measure of speed. A passing test
// waits only until cond holds.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	timeout = max(timeout, eventuallyAtLeast)
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-deadline.C:
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		case <-tick.C:
		}
	}
}

// eventuallyAtLeast is the shortest wait eventually gives: on two cores
// under -race with builds beside, a crash loop that opens a circuit after a
// few restarts of a child took more than 10 s (TestFI03 failed 3 times in 20).
const eventuallyAtLeast = time.Minute

func callText(t *testing.T, h *Hub, name string, args map[string]any) string {
	t.Helper()
	res, err := h.CallTool(t.Context(), name, args, nil)
	if err != nil {
		t.Fatalf("CallTool(%s): %v", name, err)
	}
	if res.IsError {
		t.Fatalf("CallTool(%s): isError: %v", name, res.Content)
	}
	return mcp.GetTextFromContent(res.Content[0])
}

func TestHubStdioCall(t *testing.T) {
	h := startHub(t, stdioFake("alpha"))
	if got, want := callText(t, h, "alpha_echo", map[string]any{"text": "hi"}), "hi"; got != want {
		t.Errorf("echo: got %q, want %q", got, want)
	}
	tool, ok := h.Catalog().Tool("alpha_echo")
	if !ok || tool.Upstream != "alpha" || tool.Original != "echo" || tool.Domain != "alpha" {
		t.Errorf("catalog entry: got %+v", tool)
	}
}

func TestHubChildCrashMidCallFailsFastAndRestarts(t *testing.T) {
	h := startHub(t, stdioFake("alpha"))
	pid := callText(t, h, "alpha_pid", nil)

	start := time.Now()
	_, err := h.CallTool(t.Context(), "alpha_crash", nil, nil)
	var ue *UpstreamError
	if !errors.As(err, &ue) || ue.Kind != call.KindUnavailable || ue.Upstream != "alpha" {
		t.Fatalf("crash: got %v, want an %s error from alpha", err, call.KindUnavailable)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("crash reported after %s, want at once", d)
	}
	eventually(t, 5*time.Second, "restart", func() bool {
		res, err := h.CallTool(t.Context(), "alpha_pid", nil, nil)
		return err == nil && !res.IsError
	})
	if got := callText(t, h, "alpha_pid", nil); got == pid {
		t.Errorf("pid after restart: got the same %s, want a new process", got)
	}
	if s := h.Status()[0]; s.Restarts < 1 || s.State != StateConnected {
		t.Errorf("status after restart: got %+v", s)
	}
}

func TestHubCallTimeoutCancelsUpstream(t *testing.T) {
	up := stdioFake("alpha")
	up.Timeout = 200 * time.Millisecond
	h := startHub(t, up)
	_, err := h.CallTool(t.Context(), "alpha_hang", nil, nil)
	var ue *UpstreamError
	if !errors.As(err, &ue) || ue.Kind != call.KindTimeout {
		t.Fatalf("hang: got %v, want %s", err, call.KindTimeout)
	}
	if !strings.Contains(err.Error(), "200ms") {
		t.Errorf("timeout error %q does not say the limit", err)
	}
	eventually(t, 3*time.Second, "upstream to see the cancellation", func() bool {
		return callText(t, h, "alpha_cancellations", nil) == "1"
	})
}

func TestHubCallerCancelReachesUpstream(t *testing.T) {
	h := startHub(t, stdioFake("alpha"))
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	// hang reports progress once it has the call: cancel then.
	_, err := h.CallTool(ctx, "alpha_hang", nil, func(Progress) { cancel() })
	var ue *UpstreamError
	if !errors.As(err, &ue) || ue.Kind != call.KindCancelled {
		t.Fatalf("cancelled call: got %v, want %s", err, call.KindCancelled)
	}
	eventually(t, 3*time.Second, "upstream to see the cancellation", func() bool {
		return callText(t, h, "alpha_cancellations", nil) == "1"
	})
}

func TestHubListChangedRefreshesCatalog(t *testing.T) {
	h := startHub(t, stdioFake("alpha"))
	changes := make(chan *Catalog, 8)
	h.Follow(func(c *Catalog) { changes <- c })
	<-changes // Follow's first call: the catalog as it is
	callText(t, h, "alpha_add_tool", map[string]any{"name": "late"})
	select {
	case c := <-changes:
		if _, ok := c.Tool("alpha_late"); !ok {
			t.Errorf("catalog after list_changed lacks alpha_late")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no catalog change after the upstream added a tool")
	}
	if got := callText(t, h, "alpha_late", map[string]any{"text": "x"}); got != "x" {
		t.Errorf("new tool: got %q", got)
	}
}

func TestHubCollisionIsAConfigError(t *testing.T) {
	a, b := builtinFake("alpha"), builtinFake("beta")
	a.Prefix, b.Prefix = "", ""
	h := newTestHub(t, Options{Upstreams: []UpstreamConfig{a, b}, Builtin: fakeBuiltins})
	err := h.Start(t.Context())
	if err == nil {
		t.Fatal("Start: got no error, want a collision")
	}
	for _, want := range []string{`"echo"`, "alpha", "beta", "prefix"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("collision error %q does not mention %s", err, want)
		}
	}
}

func TestHubReservedNameIsAConfigError(t *testing.T) {
	build := func(string, []string) (*server.MCPServer, error) {
		s := server.NewMCPServer("x", "1")
		s.AddTool(mcp.NewTool("call_tool"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("shadow"), nil
		})
		return s, nil
	}
	up := UpstreamConfig{Name: "sneaky", Transport: TransportBuiltin, Builtin: "x"}
	h := newTestHub(t, Options{Upstreams: []UpstreamConfig{up}, Builtin: build})
	err := h.Start(t.Context())
	if err == nil || !strings.Contains(err.Error(), "proxy's own tool") || !strings.Contains(err.Error(), "sneaky") {
		t.Fatalf("Start: got %v, want a reserved-name error naming sneaky", err)
	}
}

func TestHubAllowDeny(t *testing.T) {
	a := builtinFake("alpha")
	a.Allow = []string{"echo", "fail"}
	a.Deny = []string{"fail"}
	h := startHub(t, a)
	var names []string
	for _, tool := range h.Catalog().Tools {
		names = append(names, tool.Name)
	}
	if got := strings.Join(names, ","); got != "alpha_echo" {
		t.Errorf("tools: got %s, want alpha_echo", got)
	}
}

func TestHubBrokenUpstreamsDoNotBlockOthers(t *testing.T) {
	missing := UpstreamConfig{Name: "missing", Transport: TransportStdio, Command: "/nonexistent/mcp-server", Prefix: "missing_"}
	const sleeps = 60 * time.Second // the silent child's life
	silent := UpstreamConfig{Name: "silent", Transport: TransportStdio, Command: "sleep", Args: []string{"60"}, Prefix: "silent_"}
	alpha := stdioFake("alpha")
	alpha.ConnectTimeout = time.Minute // a healthy child starting on a loaded machine is not cut at the short limit
	h := newTestHub(t, Options{
		Upstreams: []UpstreamConfig{alpha, missing, silent}, InitTimeout: 500 * time.Millisecond,
		BackoffMin: 50 * time.Millisecond, BackoffMax: time.Second,
	})
	start := time.Now()
	if err := h.Start(t.Context()); err != nil {
		t.Fatalf("Start: %v", err)
	}
	// The silent child's first attempt ends at its limit (it shows no
	// sign of life, so the limit is not stretched) plus the grace a
	// stopped child gets; Start waits for that, not for the child.
	if s := statusOf(h, "silent"); !strings.Contains(s.Err, "no answer to initialize after 500ms (") {
		t.Errorf("silent upstream after Start: %q, want it given up at the init timeout (500ms)", s.Err)
	}
	if d := time.Since(start); d >= sleeps {
		t.Errorf("Start took %s with a hanging upstream, want it back before the child's own end (%s)", d, sleeps)
	}
	if got := callText(t, h, "alpha_echo", map[string]any{"text": "ok"}); got != "ok" {
		t.Errorf("healthy upstream: got %q", got)
	}
	states := map[string]State{}
	for _, s := range h.Status() {
		states[s.Name] = s.State
	}
	if states["alpha"] != StateConnected || states["missing"] == StateConnected || states["silent"] == StateConnected {
		t.Errorf("states: got %v", states)
	}
}

func TestHubCloseLeavesNoChild(t *testing.T) {
	h := startHub(t, stdioFake("alpha"))
	pid, err := strconv.Atoi(callText(t, h, "alpha_pid", nil))
	if err != nil {
		t.Fatal(err)
	}
	h.Close()
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("child %d after Close: kill(0) = %v, want ESRCH (gone)", pid, err)
	}
}

func TestChildEnvironmentIsMinimal(t *testing.T) {
	t.Setenv("MCP_ROUTER_TEST_SECRET", "hunter2")
	up := stdioFake("alpha")
	up.Env["TOKEN"] = "abc"
	h := startHub(t, up)
	if got := callText(t, h, "alpha_getenv", map[string]any{"name": "TOKEN"}); got != "abc" {
		t.Errorf("configured env: got %q, want abc", got)
	}
	if got := callText(t, h, "alpha_getenv", map[string]any{"name": "MCP_ROUTER_TEST_SECRET"}); got != "<unset>" {
		t.Errorf("proxy secret leaked to child: got %q", got)
	}
	if got := callText(t, h, "alpha_getenv", map[string]any{"name": "PATH"}); got == "<unset>" {
		t.Error("PATH not passed to the child")
	}
	// inherit_env opts into the whole environment.
	full := stdioFake("beta")
	full.InheritEnv = true
	hb := startHub(t, full)
	if got := callText(t, hb, "beta_getenv", map[string]any{"name": "MCP_ROUTER_TEST_SECRET"}); got != "hunter2" {
		t.Errorf("inherit_env: got %q, want the proxy's variable", got)
	}
}

func TestHubProgressUsesItsOwnToken(t *testing.T) {
	h := startHub(t, stdioFake("alpha"))
	var mu sync.Mutex
	var got []Progress
	res, err := h.CallTool(t.Context(), "alpha_progress", map[string]any{"steps": 3}, func(p Progress) {
		mu.Lock()
		got = append(got, p)
		mu.Unlock()
	})
	if err != nil || res.IsError {
		t.Fatalf("progress call: %v %v", err, res)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 3 || got[2].Progress != 3 || got[2].Total != 3 || got[0].Message != "step 1" {
		t.Errorf("progress: got %+v, want 3 steps of 3", got)
	}
}

func TestHubHTTPUpstreamWithHeaders(t *testing.T) {
	var mu sync.Mutex
	var auth string
	mcpHandler := server.NewStreamableHTTPServer(fakeupstream.New("remote"))
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auth = r.Header.Get("Authorization")
		mu.Unlock()
		mcpHandler.ServeHTTP(w, r)
	}))
	defer ts.Close()
	up := UpstreamConfig{Name: "remote", Transport: TransportStreamableHTTP, URL: ts.URL + "/mcp",
		Headers: map[string]string{"Authorization": "Bearer s3cret"}, Prefix: "remote_"}
	h := startHub(t, up)
	if got := callText(t, h, "remote_echo", map[string]any{"text": "over http"}); got != "over http" {
		t.Errorf("echo: got %q", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if auth != "Bearer s3cret" {
		t.Errorf("Authorization at upstream: got %q", auth)
	}
	h.Close()
}

func TestHubUnknownTool(t *testing.T) {
	h := startHub(t, builtinFake("alpha"))
	_, err := h.CallTool(t.Context(), "alpha_nope", nil, nil)
	var ue *UpstreamError
	if !errors.As(err, &ue) || ue.Kind != call.KindUnknownTool || !errors.Is(err, ErrUnknownTool) {
		t.Fatalf("got %v, want unknown tool", err)
	}
}

func TestHubPromptsAndResources(t *testing.T) {
	h := startHub(t, builtinFake("alpha"))
	p, err := h.GetPrompt(t.Context(), "alpha_greet", map[string]string{"who": "Ada"})
	if err != nil {
		t.Fatal(err)
	}
	if text := p.Messages[0].Content.(mcp.TextContent).Text; text != "Hello, Ada, from alpha" {
		t.Errorf("prompt: got %q", text)
	}
	c := h.Catalog()
	if len(c.Resources) != 1 || c.Resources[0].Def.URI != "fake://alpha/readme" {
		t.Fatalf("resources: got %+v", c.Resources)
	}
	req := mcp.ReadResourceRequest{}
	req.Params.URI = "fake://alpha/readme"
	r, err := h.ReadResource(t.Context(), "alpha", req)
	if err != nil {
		t.Fatal(err)
	}
	if text := r.Contents[0].(mcp.TextResourceContents).Text; text != "readme of alpha" {
		t.Errorf("resource: got %q", text)
	}
}

func TestMain_childIsOurBinary(t *testing.T) {
	// Guard: the fake upstream must be this test binary, or the tests
	// above would test nothing.
	cmd, _ := fakeupstream.Command("x")
	exe, _ := os.Executable()
	if cmd != exe {
		t.Fatalf("fake command %q is not the test binary %q", cmd, exe)
	}
}

func TestHubSSEUpstreamWithHeaders(t *testing.T) {
	var mu sync.Mutex
	var keys []string
	sse := server.NewSSEServer(fakeupstream.New("legacy"))
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		keys = append(keys, r.Header.Get("X-Api-Key"))
		mu.Unlock()
		sse.ServeHTTP(w, r)
	}))
	defer ts.Close()
	up := UpstreamConfig{Name: "legacy", Transport: TransportSSE, URL: ts.URL + "/sse",
		Headers: map[string]string{"X-Api-Key": "k3y"}, Prefix: "legacy_"}
	h := startHub(t, up)
	if got := callText(t, h, "legacy_echo", map[string]any{"text": "over sse"}); got != "over sse" {
		t.Errorf("echo over SSE: got %q", got)
	}
	h.Close()
	mu.Lock()
	defer mu.Unlock()
	for i, k := range keys {
		if k != "k3y" {
			t.Errorf("request %d reached the SSE upstream with X-Api-Key %q, want k3y", i, k)
		}
	}
	if len(keys) < 2 {
		t.Errorf("SSE upstream saw %d requests, want the stream and at least one message", len(keys))
	}
	sse.Shutdown(context.Background())
}

// An HTTP upstream's URL, which may carry a key in its query, never shows
// in a call's error: the error text reaches the model.
func TestUpstreamErrorHidesURL(t *testing.T) {
	mcpHandler := server.NewStreamableHTTPServer(fakeupstream.New("remote"))
	ts := httptest.NewServer(mcpHandler)
	t.Cleanup(func() { mcpHandler.Shutdown(context.Background()) })
	const secret = "s3cret-key-in-the-query"
	h := startHub(t, UpstreamConfig{Name: "remote", Transport: TransportStreamableHTTP,
		URL: ts.URL + "/mcp?key=" + secret, Prefix: "remote_"})
	if got := callText(t, h, "remote_echo", map[string]any{"text": "up"}); got != "up" {
		t.Fatalf("echo: %q", got)
	}
	ts.CloseClientConnections()
	ts.Close()
	_, err := h.CallTool(t.Context(), "remote_echo", map[string]any{"text": "down"}, nil)
	ue := wantKind(t, "a call to a stopped HTTP upstream", err, call.KindUnavailable)
	if msg := ue.Error(); strings.Contains(msg, secret) || strings.Contains(msg, ts.URL) {
		t.Errorf("the error names the upstream's URL: %s", msg)
	}
	// Later calls report the reconnects' failures (until the circuit
	// opens), and Status reports the last one: neither names the URL.
	// (A call waits up to ReconnectWait for the upstream to come back.)
	for open := false; !open; {
		_, err := h.CallTool(t.Context(), "remote_echo", map[string]any{"text": "down"}, nil)
		if err == nil {
			t.Fatal("a call to a stopped upstream succeeded")
		}
		if strings.Contains(err.Error(), secret) {
			t.Fatalf("a later error names the upstream's URL: %v", err)
		}
		var ue *UpstreamError
		open = errors.As(err, &ue) && ue.Kind == call.KindCircuitOpen
	}
	for _, st := range h.Status() {
		if strings.Contains(st.Err, secret) {
			t.Errorf("Status names the upstream's URL: %v", st.Err)
		}
	}
}

// A call, a resource read or a prompt get after Close fails at once with
// ErrHubNotRunning: it does not wait ReconnectWait for an upstream that
// the closed hub will never bring back.
func TestCallAfterCloseFailsAtOnce(t *testing.T) {
	h := startHubWith(t, Options{Upstreams: []UpstreamConfig{builtinFake("alpha")}, Builtin: fakeBuiltins,
		ReconnectWait: time.Hour})
	if got := callText(t, h, "alpha_echo", map[string]any{"text": "up"}); got != "up" {
		t.Fatalf("echo before Close: %q", got)
	}
	h.Close()
	// The bound only ends a test that would otherwise hang for the hour.
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	_, err := h.CallTool(ctx, "alpha_echo", map[string]any{"text": "down"}, nil)
	if ue := wantKind(t, "a call after Close", err, call.KindUnavailable); !errors.Is(ue, ErrHubNotRunning) {
		t.Fatalf("a call after Close: got %v, want %v", err, ErrHubNotRunning)
	}
	req := mcp.ReadResourceRequest{}
	req.Params.URI = "fake://alpha/readme"
	if _, err := h.ReadResource(ctx, "alpha", req); !errors.Is(err, ErrHubNotRunning) {
		t.Fatalf("a resource read after Close: got %v, want %v", err, ErrHubNotRunning)
	}
	if _, err := h.GetPrompt(ctx, "alpha_greet", nil); !errors.Is(err, ErrHubNotRunning) {
		t.Fatalf("a prompt get after Close: got %v, want %v", err, ErrHubNotRunning)
	}
}

// A resource read and a prompt get of an upstream restarting for an edit
// wait for it (the read pipeline's start-wait), as a call does, rather
// than fail while it reconnects.
func TestHubReadsWaitForARestartedUpstream(t *testing.T) {
	slow := func(delay string) UpstreamConfig {
		exe, env := stdioFake("alpha").Command, stdioFake("alpha").Env
		env["DELAY"], env["FAKE"] = delay, exe
		return UpstreamConfig{Name: "alpha", Transport: TransportStdio, Command: "sh",
			Args: []string{"-c", `sleep "$DELAY"; exec "$FAKE"`}, Env: env, Prefix: "alpha_"}
	}
	h := startHubWith(t, Options{Upstreams: []UpstreamConfig{slow("0")}, ReconnectWait: time.Millisecond})
	if _, err := h.Apply(t.Context(), []UpstreamConfig{slow("0.5")}); err != nil {
		t.Fatal(err)
	}
	req := mcp.ReadResourceRequest{}
	req.Params.URI = "fake://alpha/readme"
	res, err := h.ReadResource(t.Context(), "alpha", req)
	if err != nil {
		t.Fatalf("a resource read while alpha restarts: %v", err)
	}
	if text := res.Contents[0].(mcp.TextResourceContents).Text; text != "readme of alpha" {
		t.Errorf("readme: got %q, want %q", text, "readme of alpha")
	}
	if _, err := h.Apply(t.Context(), []UpstreamConfig{slow("0.6")}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.GetPrompt(t.Context(), "alpha_greet", map[string]string{"who": "Ada"}); err != nil {
		t.Fatalf("a prompt get while alpha restarts: %v", err)
	}
}
