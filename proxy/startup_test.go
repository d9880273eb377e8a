package proxy

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-router/mcp-router/proxy/call"
	"github.com/mcp-router/mcp-router/proxy/frontdoor"
)

// hungStdio is a real child process that reads its stdin and never
// answers: initialize goes unanswered until the init timeout.
func hungStdio(name string) UpstreamConfig {
	return UpstreamConfig{Name: name, Transport: TransportStdio, Command: "sh", Args: []string{"-c", "cat >/dev/null"}, Prefix: name + "_"}
}

// gates holds back the built-in upstreams named in it until the test
// opens their gate: an upstream that connects when the test says.
type gates struct {
	mu     sync.Mutex
	closed map[string]bool
	ch     map[string]chan struct{}
}

func newGates(t *testing.T, names ...string) *gates {
	g := &gates{closed: map[string]bool{}, ch: map[string]chan struct{}{}}
	for _, n := range names {
		g.ch[n] = make(chan struct{})
	}
	return g
}

func (g *gates) open(name string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.closed[name] {
		g.closed[name] = true
		close(g.ch[name])
	}
}

func (g *gates) openAll() {
	for n := range g.ch {
		g.open(n)
	}
}

// builtins serves faultBuiltins, each gated upstream (by args[0], the
// upstream's name for toolsUpstream) once its gate is open.
func (g *gates) builtins(name string, args []string) (*server.MCPServer, error) {
	if len(args) > 0 {
		if ch, ok := g.ch[args[0]]; ok {
			<-ch
		}
	}
	return faultBuiltins(name, args)
}

// launchHub launches a hub on g's builtins without waiting for any
// upstream; the gates open, then the hub closes, when the test ends.
func launchHub(t *testing.T, g *gates, opts Options) *Hub {
	t.Helper()
	opts.Builtin = g.builtins
	opts.InitTimeout = cmp.Or(opts.InitTimeout, time.Minute)
	h := newTestHub(t, opts)
	t.Cleanup(g.openAll) // runs first: no upstream stays blocked in its builder
	if err := h.Launch(t.Context()); err != nil {
		t.Fatalf("Launch: %v", err)
	}
	return h
}

func listedNames(t *testing.T, c *sdkClient) []string {
	t.Helper()
	res, err := c.session.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	return names
}

// A client's initialize is answered while an upstream, a real child that
// never answers, is still on its first attempt; the status says what the
// attempt is doing, never an empty error.
func TestInitializeAnsweredWhileAnUpstreamHangs(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			h := launchHub(t, newGates(t), Options{Upstreams: []UpstreamConfig{builtinFake("alpha"), hungStdio("hung")}})
			c := tr.connect(t, h) // initialize answered
			if s := statusOf(h, "hung"); !s.Starting || s.State == StateConnected {
				t.Fatalf("hung upstream after initialize: %+v, want still on its first attempt", s)
			}
			eventually(t, faultWait, "the hung upstream's status to say what it waits for", func() bool {
				return strings.Contains(statusOf(h, "hung").Doing, "process running, no answer to initialize after")
			})
			eventually(t, faultWait, "alpha's tools to be listed", func() bool {
				return slices.Contains(listedNames(t, c), "alpha_echo")
			})
			if got := resultText(c.call(t, "alpha_echo", map[string]any{"text": "served"})); got != "served" {
				t.Errorf("a call while hung starts: got %q", got)
			}
		})
	}
}

// An upstream that connects after the client initialized joins the
// catalog, and the client hears notifications/tools/list_changed.
func TestLateUpstreamJoinsWithListChanged(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			g := newGates(t, "late")
			h := launchHub(t, g, Options{Upstreams: []UpstreamConfig{builtinFake("alpha"), toolsUpstream("late", "late_", "ping")}})
			eventually(t, faultWait, "alpha to connect", func() bool { return statusOf(h, "alpha").State == StateConnected })
			c := tr.connect(t, h)
			if names := listedNames(t, c); slices.Contains(names, "late_ping") {
				t.Fatalf("tools before late connected: %v", names)
			}
			g.open("late")
			select {
			case <-c.changed:
			case <-time.After(faultWait):
				t.Fatal("no notifications/tools/list_changed after the late upstream connected")
			}
			if names := listedNames(t, c); !slices.Contains(names, "late_ping") {
				t.Errorf("tools after list_changed: %v, want late_ping", names)
			}
			if got := resultText(c.call(t, "late_ping", nil)); got != "ping from late" {
				t.Errorf("late_ping: got %q", got)
			}
		})
	}
}

// A call of a tool of an upstream still starting waits for it, and goes
// through once it has connected.
func TestCallWaitsForAStartingUpstream(t *testing.T) {
	g := newGates(t, "late")
	h := launchHub(t, g, Options{Upstreams: []UpstreamConfig{toolsUpstream("late", "late_", "ping")}, StartWait: time.Minute})
	type outcome struct {
		text string
		err  error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := h.CallTool(t.Context(), "late_ping", nil, nil)
		if err != nil {
			done <- outcome{err: err}
			return
		}
		done <- outcome{text: mcp.GetTextFromContent(res.Content[0])}
	}()
	select {
	case o := <-done:
		t.Fatalf("the call returned before the upstream connected: %+v", o)
	default:
	}
	g.open("late")
	select {
	case o := <-done:
		if o.err != nil || o.text != "ping from late" {
			t.Errorf("call once late connected: got %q, %v; want ping from late", o.text, o.err)
		}
	case <-time.After(faultWait):
		t.Fatal("the call did not return after the upstream connected")
	}
}

// Past StartWait, a call of a tool of an upstream still starting fails
// with upstream_starting, saying for how long and what it is doing;
// through call_tool and run_plan too.
func TestCallOfAStartingUpstreamFailsWithUpstreamStarting(t *testing.T) {
	h := launchHub(t, newGates(t), Options{Upstreams: []UpstreamConfig{builtinFake("alpha"), hungStdio("hung")}, StartWait: 50 * time.Millisecond})
	_, err := h.CallTool(t.Context(), "hung_echo", nil, nil)
	ue := wantKind(t, "a call of a starting upstream's tool", err, call.KindStarting)
	if ue.Upstream != "hung" || !errors.Is(err, ErrStarting) || !strings.Contains(err.Error(), "still starting for") {
		t.Errorf("error: %v, want upstream hung, still starting for ...", err)
	}
	// A name that is nobody's is still an unknown tool, at once.
	if _, err := h.CallTool(t.Context(), "nobody_echo", nil, nil); !errors.Is(err, ErrUnknownTool) {
		t.Errorf("unknown tool: got %v", err)
	}
	c := overHTTP(t, h)
	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"hung_echo", map[string]any{"text": "x"}}, // not registered yet: mcp-go alone would say "not found"
		{"call_tool", map[string]any{"name": "hung_echo", "arguments": map[string]any{"text": "x"}}},
		{"run_plan", map[string]any{"steps": []any{map[string]any{"id": "a", "tool": "hung_echo", "args": map[string]any{"text": "x"}}}}},
	} {
		res := c.call(t, tc.tool, tc.args)
		kind, _ := res.StructuredContent.(map[string]any)["error"].(map[string]any)["kind"].(string)
		if !res.IsError || kind != string(call.KindStarting) || !strings.Contains(resultText(res), "hung") {
			t.Errorf("%s: isError %v, kind %q, text %q; want an upstream_starting error naming hung", tc.tool, res.IsError, kind, resultText(res))
		}
	}
	if _, err := c.session.CallTool(t.Context(), &sdk.CallToolParams{Name: "nobody_echo"}); err == nil {
		t.Error("a direct call of a tool that is nobody's: got a result, want the unknown-tool protocol error")
	}
}

// A client's direct tools/call of a tool whose upstream is still starting
// (not registered yet) waits for it, and goes through once it connected.
func TestDirectCallWaitsForAStartingUpstream(t *testing.T) {
	g := newGates(t, "late")
	h := launchHub(t, g, Options{Upstreams: []UpstreamConfig{builtinFake("alpha"), toolsUpstream("late", "late_", "ping")}, StartWait: time.Minute})
	c := overHTTP(t, h)
	done := make(chan *sdk.CallToolResult, 1)
	go func() {
		res, err := c.session.CallTool(t.Context(), &sdk.CallToolParams{Name: "late_ping"})
		if err != nil {
			res = &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: err.Error()}}}
		}
		done <- res
	}()
	select {
	case res := <-done:
		t.Fatalf("the call returned before the upstream connected: %s", resultText(res))
	default:
	}
	g.open("late")
	select {
	case res := <-done:
		if res.IsError || resultText(res) != "ping from late" {
			t.Errorf("late_ping once late connected: %s", resultText(res))
		}
	case <-time.After(faultWait):
		t.Fatal("the call did not return after the upstream connected")
	}
}

// While upstreams are on their first attempt, a contested name goes to the
// first in name order, whichever connects first; the collision is logged
// as an error naming both upstreams and the file, and AwaitStarted (as
// tools and doctor use it) returns it.
func TestContestedNameGoesByUpstreamOrderOnFirstAttempts(t *testing.T) {
	var logs syncBuffer
	g := newGates(t, "alpha")
	h := launchHub(t, g, Options{
		Upstreams:  []UpstreamConfig{toolsUpstream("alpha", "", "x"), toolsUpstream("beta", "", "x", "y")},
		Logger:     slog.New(slog.NewTextHandler(&logs, nil)),
		ConfigFile: "profiles.yaml",
	})
	owner := func() string {
		t, _ := h.Catalog().Tool("x")
		return t.Upstream
	}
	eventually(t, faultWait, "beta to take x while alpha starts", func() bool { return owner() == "beta" })
	g.open("alpha")
	eventually(t, faultWait, "alpha to take x on joining", func() bool { return owner() == "alpha" })
	if tool, ok := h.Catalog().Tool("y"); !ok || tool.Upstream != "beta" {
		t.Errorf("y: got %+v, want beta's", tool)
	}
	err := h.AwaitStarted(t.Context())
	var ce *CollisionError
	if !errors.As(err, &ce) || !slices.Equal(ce.Upstreams, []string{"alpha", "beta"}) {
		t.Errorf("AwaitStarted: got %v, want the collision of alpha and beta", err)
	}
	line := ""
	for _, l := range strings.Split(logs.String(), "\n") {
		if strings.Contains(l, "level=ERROR") && strings.Contains(l, "catalog problem") {
			line = l
		}
	}
	for _, want := range []string{"alpha", "beta", "file=profiles.yaml"} {
		if !strings.Contains(line, want) {
			t.Errorf("error log %q lacks %s", line, want)
		}
	}
}

// /readyz answers 503 while an upstream is not connected; without the
// token it says only the counts, with it which upstream and why; /healthz
// answers 200; both refuse a foreign Host as /mcp does.
func TestReadyzNamesUpstreamsOnlyWithTheToken(t *testing.T) {
	missing := UpstreamConfig{Name: "missing", Transport: TransportStdio, Command: "/nonexistent/mcp-server", Prefix: "missing_"}
	h := launchHub(t, newGates(t), Options{Upstreams: []UpstreamConfig{builtinFake("alpha"), missing}})
	eventually(t, faultWait, "first attempts", func() bool {
		return !statusOf(h, "alpha").Starting && !statusOf(h, "missing").Starting
	})
	opts := frontdoor.Options{BearerTokens: []string{"t0ken"}}
	mux := http.NewServeMux()
	mux.Handle("/healthz", HealthHandler(h, Alive, opts))
	mux.Handle("/readyz", HealthHandler(h, Ready, opts))
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	get := func(path, token, host string) (int, string) {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, ts.URL+path, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		if host != "" {
			req.Host = host
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b strings.Builder
		_, _ = io.Copy(&b, resp.Body)
		return resp.StatusCode, b.String()
	}
	code, body := get("/readyz", "", "")
	if code != http.StatusServiceUnavailable || !strings.Contains(body, `"total":2`) || !strings.Contains(body, `"connected":1`) {
		t.Errorf("/readyz without token: %d %s, want 503 with the counts", code, body)
	}
	for _, leak := range []string{"missing", "alpha", "nonexistent"} {
		if strings.Contains(body, leak) {
			t.Errorf("/readyz without token names %q: %s", leak, body)
		}
	}
	code, body = get("/readyz", "wrong", "")
	if code != http.StatusServiceUnavailable || strings.Contains(body, "missing") {
		t.Errorf("/readyz with a wrong token: %d %s, want 503 without names", code, body)
	}
	code, body = get("/readyz", "t0ken", "")
	if code != http.StatusServiceUnavailable || !strings.Contains(body, `"name":"missing"`) || !strings.Contains(body, "nonexistent") {
		t.Errorf("/readyz with the token: %d %s, want 503 naming missing and why", code, body)
	}
	if code, body = get("/healthz", "", ""); code != http.StatusOK || !strings.Contains(body, `"status":"alive"`) {
		t.Errorf("/healthz: %d %s, want 200 alive", code, body)
	}
	if code, _ = get("/readyz", "t0ken", "evil.example"); code != http.StatusForbidden {
		t.Errorf("/readyz with a foreign Host: %d, want 403", code)
	}
}

// Once every upstream is connected, /readyz answers 200.
func TestReadyzReadyWhenAllConnected(t *testing.T) {
	h := startHub(t, builtinFake("alpha"))
	ts := httptest.NewServer(HealthHandler(h, Ready, frontdoor.Options{}))
	t.Cleanup(ts.Close)
	resp, err := http.Get(ts.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("/readyz: %d, want 200", resp.StatusCode)
	}
}

// The log says what a hung upstream was doing when it was given up, never
// an empty error: a child that runs and never answers, a remote that takes
// no notice (by host only: no path or query).
func TestHungUpstreamLogSaysWhatItWaitedFor(t *testing.T) {
	never := make(chan struct{})
	silent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-never:
		}
	}))
	t.Cleanup(silent.Close)
	t.Cleanup(func() { close(never) })
	remote := UpstreamConfig{Name: "remote", Transport: TransportStreamableHTTP, URL: silent.URL + "/mcp/private?key=s3cret", Prefix: "remote_"}
	var logs syncBuffer
	h := launchHub(t, newGates(t), Options{Upstreams: []UpstreamConfig{hungStdio("hung"), remote},
		InitTimeout: 100 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err := h.AwaitStarted(t.Context()); err != nil {
		t.Fatal(err)
	}
	host := strings.TrimPrefix(silent.URL, "http://")
	want := map[string]string{
		"hung":   "process running, no answer to initialize after 100ms",
		"remote": "connecting to " + host + ": no answer to initialize after 100ms",
	}
	for _, line := range strings.Split(logs.String(), "\n") {
		if !strings.Contains(line, "upstream down") {
			continue
		}
		if strings.Contains(line, `err=""`) || strings.Contains(line, "s3cret") || strings.Contains(line, "/mcp/private") {
			t.Errorf("log line %q: an empty error or the URL's path or query", line)
		}
		for name, text := range want {
			if strings.Contains(line, "upstream="+name) && strings.Contains(line, text) {
				delete(want, name)
			}
		}
	}
	for name, text := range want {
		t.Errorf("no 'upstream down' line for %s saying %q in:\n%s", name, text, logs.String())
	}
}

// A remote that never connected: a call of its tool fails at once with
// upstream_unavailable, whose text (which the model reads) leaves out the
// host that the status (for the log and doctor) names.
func TestCallOfANeverConnectedRemoteHidesItsHost(t *testing.T) {
	ts := httptest.NewServer(http.NotFoundHandler())
	host := strings.TrimPrefix(ts.URL, "http://")
	ts.Close() // nothing listens there now
	remote := UpstreamConfig{Name: "remote", Transport: TransportStreamableHTTP, URL: "http://" + host + "/mcp", Prefix: "remote_"}
	h := launchHub(t, newGates(t), Options{Upstreams: []UpstreamConfig{remote}})
	if err := h.AwaitStarted(t.Context()); err != nil {
		t.Fatal(err)
	}
	if s := statusOf(h, "remote"); !strings.Contains(s.Err, "connecting to "+host) {
		t.Errorf("status error %q does not name the host", s.Err)
	}
	_, err := h.CallTool(t.Context(), "remote_echo", nil, nil)
	wantKind(t, "a call of a remote that never connected", err, call.KindUnavailable)
	if strings.Contains(err.Error(), host) {
		t.Errorf("the call's error names the host: %v", err)
	}
}

// Upstreams that connect together share the catalog's rebuilds, and the
// names go as if they had joined one by one: a contested name to the first
// in name order, though the last connected first and held it, and every
// collision an error naming the keeper and the other upstream.
func TestUpstreamsJoiningTogetherKeepNameOrder(t *testing.T) {
	const n = 24
	var ups []UpstreamConfig
	var gated []string
	for i := range n {
		name := fmt.Sprintf("u%02d", i)
		ups = append(ups, toolsUpstream(name, "", "x", name+"_own"))
		if i < n-1 {
			gated = append(gated, name)
		}
	}
	g := newGates(t, gated...)
	h := launchHub(t, g, Options{Upstreams: ups})
	last := fmt.Sprintf("u%02d", n-1)
	eventually(t, faultWait, last+" to take x first", func() bool {
		tool, ok := h.Catalog().Tool("x")
		return ok && tool.Upstream == last
	})
	g.openAll()
	err := h.AwaitStarted(t.Context())
	if tool, _ := h.Catalog().Tool("x"); tool.Upstream != "u00" {
		t.Errorf("x: got upstream %q, want u00", tool.Upstream)
	}
	for _, u := range ups {
		if _, ok := h.Catalog().Tool(u.Name + "_own"); !ok {
			t.Errorf("%s_own missing from the catalog", u.Name)
		}
	}
	joined, ok := err.(interface{ Unwrap() []error })
	if !ok {
		t.Fatalf("AwaitStarted: got %v, want the collisions", err)
	}
	var got, want [][]string
	for _, e := range joined.Unwrap() {
		if ce, ok := e.(*CollisionError); ok {
			got = append(got, ce.Upstreams)
		}
	}
	for i := 1; i < n; i++ {
		want = append(want, []string{"u00", fmt.Sprintf("u%02d", i)})
	}
	if !slices.EqualFunc(got, want, slices.Equal[[]string]) {
		t.Errorf("collisions: got %v, want %v", got, want)
	}
}
