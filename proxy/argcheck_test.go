package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-router/mcp-router/internal/fakeupstream"
	"github.com/mcp-router/mcp-router/proxy/call"
)

// callLog records the tools/call requests that reach an HTTP upstream,
// with their arguments as they arrived.
type callLog struct {
	mu    sync.Mutex
	calls []loggedCall
}

type loggedCall struct {
	name string
	args string // compacted JSON
}

func (l *callLog) note(body []byte) {
	var msg struct {
		Method string `json:"method"`
		Params struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &msg) != nil || msg.Method != string(mcp.MethodToolsCall) {
		return
	}
	var b bytes.Buffer
	if len(msg.Params.Arguments) > 0 {
		_ = json.Compact(&b, msg.Params.Arguments)
	}
	l.mu.Lock()
	l.calls = append(l.calls, loggedCall{msg.Params.Name, b.String()})
	l.mu.Unlock()
}

// of lists the arguments of every call of tool (the upstream's own name).
func (l *callLog) of(tool string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, c := range l.calls {
		if c.name == tool {
			out = append(out, c.args)
		}
	}
	return out
}

// loggedHTTPFake serves a fake upstream over streamable HTTP behind a
// handler that logs the tools/call requests reaching it.
func loggedHTTPFake(t *testing.T, name string) (UpstreamConfig, *callLog) {
	t.Helper()
	log := &callLog{}
	return tappedHTTPFake(t, name, func(body []byte, _ *http.Request) { log.note(body) }), log
}

// tappedHTTPFake serves a fake upstream over streamable HTTP behind a
// handler that shows tap every POSTed body before the fake reads it.
func tappedHTTPFake(t *testing.T, name string, tap func(body []byte, r *http.Request)) UpstreamConfig {
	t.Helper()
	mcpHandler := server.NewStreamableHTTPServer(fakeupstream.New(name))
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, err := io.ReadAll(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			tap(body, r)
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		mcpHandler.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close) // after the hub's cleanup, which is registered later
	return UpstreamConfig{Name: name, Transport: TransportStreamableHTTP, URL: ts.URL + "/mcp", Prefix: name + "_"}
}

// wantRefused checks a client-facing result is the invalid_arguments
// refusal of tool on upstream, naming the violation.
func wantRefused(t *testing.T, res *sdk.CallToolResult, tool, upstream, violation string) {
	t.Helper()
	text := resultText(res)
	if !res.IsError || !strings.Contains(text, tool) || !strings.Contains(text, "invalid_arguments") || !strings.Contains(text, violation) {
		t.Errorf("got %q (isError %v), want an invalid_arguments error naming %s and %q", text, res.IsError, tool, violation)
	}
	var sc struct {
		Error struct{ Kind, Upstream, Tool string }
	}
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, &sc); err != nil || sc.Error.Kind != "invalid_arguments" || sc.Error.Upstream != upstream || sc.Error.Tool != tool {
		t.Errorf("structuredContent: got %s, want kind invalid_arguments, upstream %s, tool %s", b, upstream, tool)
	}
}

// BI-07: with validate_arguments on, a call whose arguments violate the
// tool's inputSchema is refused before forwarding as an isError result
// naming the violations (directly and through call_tool); valid calls
// pass. With it off (the default), the gateway passes arguments through
// unchanged and the upstream judges them.
func TestBI07ArgumentsAgainstInputSchema(t *testing.T) {
	strict, strictLog := loggedHTTPFake(t, "strict")
	strict.ValidateArguments = true
	loose, looseLog := loggedHTTPFake(t, "loose")
	h := startHub(t, strict, loose)
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			c := tr.connect(t, h)
			echoes := len(strictLog.of("echo"))

			wantRefused(t, c.call(t, "strict_sleep", map[string]any{"ms": "soon"}), "strict_sleep", "strict", "/ms: got string, want number")
			wantRefused(t, c.call(t, "strict_echo", map[string]any{}), "strict_echo", "strict", "(root): missing property 'text'")
			wantRefused(t, c.call(t, "call_tool", map[string]any{"name": "strict_echo", "arguments": map[string]any{"text": 5}}),
				"strict_echo", "strict", "/text: got number, want string")

			if res := c.call(t, "strict_echo", map[string]any{"text": "valid"}); res.IsError || resultText(res) != "valid" {
				t.Errorf("valid call: got %q (isError %v)", resultText(res), res.IsError)
			}
			if got := strictLog.of("echo"); len(got) != echoes+1 || got[len(got)-1] != `{"text":"valid"}` {
				t.Errorf("strict upstream got echo calls %q; want only the valid one added", got)
			}
			if got := strictLog.of("sleep"); len(got) != 0 {
				t.Errorf("a refused call reached the upstream: %q", got)
			}

			before := len(looseLog.of("sleep"))
			if res := c.call(t, "loose_sleep", map[string]any{"ms": "soon"}); res.IsError {
				t.Errorf("passthrough: got isError %q", resultText(res))
			}
			if got := looseLog.of("sleep"); len(got) != before+1 || got[len(got)-1] != `{"ms":"soon"}` {
				t.Errorf("passthrough: upstream got sleep calls %q, want {\"ms\":\"soon\"} unchanged", got)
			}
		})
	}
}

// shifty is an in-process upstream whose tool num changes its schema on
// request (as a list_changed would bring), with a tool whose schema does
// not compile; it counts the calls that reach it.
type shifty struct {
	srv   *server.MCPServer
	hub   atomic.Pointer[Hub]
	mu    sync.Mutex
	calls map[string]int
}

const (
	looseNumSchema  = `{"type":"object","properties":{"n":{}}}`
	strictNumSchema = `{"type":"object","properties":{"n":{"type":"number"}},"required":["n"]}`
)

func newShifty() *shifty {
	s := &shifty{calls: map[string]int{}}
	s.srv = server.NewMCPServer("shifty", "1.0.0", server.WithToolCapabilities(true))
	s.srv.AddTool(mcp.NewToolWithRawSchema("num", "Take n", json.RawMessage(looseNumSchema)), s.count("num"))
	s.srv.AddTool(brokenTool(), s.count("broken"))
	s.srv.AddTool(mcp.NewTool("tighten", mcp.WithDescription("Make num's n a required number")), s.tighten)
	return s
}

// brokenTool's input schema does not compile.
func brokenTool() mcp.Tool {
	return mcp.NewToolWithRawSchema("broken", "Its schema has an unknown type",
		json.RawMessage(`{"type":"object","properties":{"n":{"type":"numbr"}}}`))
}

func (s *shifty) count(tool string) server.ToolHandlerFunc {
	return func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		s.mu.Lock()
		s.calls[tool]++
		s.mu.Unlock()
		return mcp.NewToolResultText("ok"), nil
	}
}

func (s *shifty) seen(tool string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[tool]
}

// tighten redefines num with the strict schema and answers once the hub's
// catalog shows it (bounded), so that the next step of a plan meets it.
func (s *shifty) tighten(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	s.srv.AddTool(mcp.NewToolWithRawSchema("num", "Take n", json.RawMessage(strictNumSchema)), s.count("num"))
	deadline := time.NewTimer(5 * time.Second)
	defer deadline.Stop()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for !s.hubShows("shifty_num", `"number"`) {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-deadline.C:
			return mcp.NewToolResultError("the hub did not pick up the new schema"), nil
		case <-tick.C:
		}
	}
	return mcp.NewToolResultText("tightened"), nil
}

func (s *shifty) hubShows(tool, text string) bool {
	h := s.hub.Load()
	if h == nil {
		return false
	}
	t, ok := h.Catalog().Tool(tool)
	return ok && strings.Contains(string(t.Def.RawInputSchema), text)
}

func startShiftyHub(t *testing.T, logger *slog.Logger) (*Hub, *shifty) {
	t.Helper()
	s := newShifty()
	up := UpstreamConfig{Name: "shifty", Transport: TransportBuiltin, Builtin: "shifty", Prefix: "shifty_", ValidateArguments: true}
	h := startHubWith(t, Options{Upstreams: []UpstreamConfig{up}, Logger: logger,
		Builtin: func(string, []string) (*server.MCPServer, error) { return s.srv, nil }})
	s.hub.Store(h)
	return h, s
}

func wantInvalidArguments(t *testing.T, err error, violation string) {
	t.Helper()
	var ue *UpstreamError
	if !errors.As(err, &ue) || ue.Kind != call.KindInvalidArguments || !errors.Is(err, call.ErrInvalidArguments) || !strings.Contains(err.Error(), violation) {
		t.Errorf("got %v, want invalid_arguments naming %q", err, violation)
	}
}

// BI-07: a list_changed with a new schema is validated against the new
// one; a schema that does not compile lets calls through with one warning
// naming the tool and upstream; tools that left the catalog leave the
// schema cache.
func TestBI07SchemaChangesAndBrokenSchemas(t *testing.T) {
	var logs syncBuffer
	h, s := startShiftyHub(t, slog.New(slog.NewTextHandler(&logs, nil)))
	ctx := t.Context()

	if _, err := h.CallTool(ctx, "shifty_num", map[string]any{"n": "x"}, nil); err != nil {
		t.Fatalf("loose schema: %v", err)
	}
	if _, err := h.CallTool(ctx, "shifty_tighten", nil, nil); err != nil {
		t.Fatalf("tighten: %v", err)
	}
	_, err := h.CallTool(ctx, "shifty_num", map[string]any{"n": "x"}, nil)
	wantInvalidArguments(t, err, "/n: got string, want number")
	_, err = h.CallTool(ctx, "shifty_num", json.RawMessage(`{}`), nil)
	wantInvalidArguments(t, err, "(root): missing property 'n'")
	if _, err := h.CallTool(ctx, "shifty_num", json.RawMessage(`{"n": 12345678901234567890}`), nil); err != nil {
		t.Errorf("valid call after the change: %v", err)
	}
	if got := s.seen("num"); got != 2 {
		t.Errorf("num reached the upstream %d times, want 2 (the refused calls never)", got)
	}

	for range 2 {
		if _, err := h.CallTool(ctx, "shifty_broken", map[string]any{"n": "anything"}, nil); err != nil {
			t.Errorf("a tool whose schema does not compile must pass: %v", err)
		}
	}
	if got := s.seen("broken"); got != 2 {
		t.Errorf("broken reached the upstream %d times, want 2", got)
	}
	if n := strings.Count(logs.String(), "does not compile"); n != 1 || !strings.Contains(logs.String(), "tool=shifty_broken upstream=shifty") {
		t.Errorf("want one warning naming tool and upstream, got %d in:\n%s", n, logs.String())
	}

	s.srv.DeleteTools("broken")
	eventually(t, 5*time.Second, "shifty_broken to leave the catalog", func() bool {
		_, ok := h.Catalog().Tool("shifty_broken")
		return !ok
	})
	if _, err := h.CallTool(ctx, "shifty_num", map[string]any{"n": 1}, nil); err != nil {
		t.Fatal(err)
	}
	// The compiled schema of a tool that left the catalog is dropped: when
	// it comes back with the same schema, it is compiled (and warned of) again.
	s.srv.AddTool(brokenTool(), s.count("broken"))
	eventually(t, 5*time.Second, "shifty_broken to come back", func() bool {
		_, ok := h.Catalog().Tool("shifty_broken")
		return ok
	})
	for range 2 {
		if _, err := h.CallTool(ctx, "shifty_broken", map[string]any{"n": 1}, nil); err != nil {
			t.Fatal(err)
		}
	}
	if n := strings.Count(logs.String(), "does not compile"); n != 2 {
		t.Errorf("want a second warning, once, after shifty_broken left and came back; got %d in:\n%s", n, logs.String())
	}
}

// BI-07: run_plan steps meet the same check. The executor already checks
// a step's arguments against the schema it validated the plan with
// (literal ones before the run, substituted ones before the call); the
// hub's check also catches a schema that changed while the plan ran.
func TestBI07RunPlanStepsAreChecked(t *testing.T) {
	h, s := startShiftyHub(t, nil)
	strict, strictLog := loggedHTTPFake(t, "strict")
	strict.ValidateArguments = true
	h2 := startHub(t, strict)

	c := overHTTP(t, h)
	res := c.call(t, "run_plan", map[string]any{"steps": []any{
		map[string]any{"id": "t", "tool": "shifty_tighten"},
		map[string]any{"id": "b", "tool": "shifty_num", "args": map[string]any{"n": "x"}, "depends_on": []any{"t"}},
	}})
	text := resultText(res)
	if !res.IsError || !strings.Contains(text, "t (shifty_tighten): succeeded") ||
		!strings.Contains(text, "b (shifty_num): failed: calling shifty_num on shifty: invalid_arguments") ||
		!strings.Contains(text, "/n: got string, want number") {
		t.Errorf("plan across a schema change: got isError %v:\n%s", res.IsError, text)
	}
	if got := s.seen("num"); got != 0 {
		t.Errorf("the refused step reached the upstream %d times", got)
	}

	c2 := overHTTP(t, h2)
	res = c2.call(t, "run_plan", map[string]any{"steps": []any{
		map[string]any{"id": "a", "tool": "strict_echo", "args": map[string]any{"text": "soon"}},
		map[string]any{"id": "b", "tool": "strict_sleep", "args": map[string]any{"ms": "$<<a.text>>"}},
	}})
	if text := resultText(res); !res.IsError || !strings.Contains(text, "b (strict_sleep): failed") || !strings.Contains(text, "want number") {
		t.Errorf("substituted argument: got isError %v:\n%s", res.IsError, text)
	}
	if got := strictLog.of("sleep"); len(got) != 0 {
		t.Errorf("a step with a bad substituted argument reached the upstream: %q", got)
	}

	// The caller run_plan uses refuses such a call itself too.
	type sleepArgs struct {
		MS int `json:"ms"`
	}
	_, err := hubCaller{hub: h2}.CallTool(t.Context(), "strict_sleep", sleepArgs{MS: 1})
	if err != nil {
		t.Errorf("valid call through the plan caller: %v", err)
	}
	_, err = hubCaller{hub: h2}.CallTool(t.Context(), "strict_sleep", map[string]any{"ms": "soon"})
	wantInvalidArguments(t, err, "/ms: got string, want number")
}
