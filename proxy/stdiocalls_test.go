package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// heldUpstream is an upstream whose one tool, hold, counts the calls in
// flight on it. Each call waits until want calls have begun (or ctx ends,
// or a generous bound passes so that a failing test ends), then works
// 50 ms. The most calls seen in flight at once is the concurrency the
// gateway let through; it does not depend on how fast the machine is.
type heldUpstream struct {
	want     int
	started  atomic.Int64
	inflight atomic.Int64
	most     atomic.Int64
	all      chan struct{} // closed when want calls have begun
	once     sync.Once
}

func newHeldUpstream(want int) *heldUpstream {
	return &heldUpstream{want: want, all: make(chan struct{})}
}

func (u *heldUpstream) builtin(string, []string) (*server.MCPServer, error) {
	s := server.NewMCPServer("held", "1")
	s.AddTool(mcp.NewTool("hold"), u.hold)
	return s, nil
}

func (u *heldUpstream) hold(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	n := u.inflight.Add(1)
	defer u.inflight.Add(-1)
	for m := u.most.Load(); n > m && !u.most.CompareAndSwap(m, n); m = u.most.Load() {
	}
	if u.started.Add(1) >= int64(u.want) {
		u.once.Do(func() { close(u.all) })
	}
	bound := time.NewTimer(5 * time.Second) // only a failing test waits this long
	defer bound.Stop()
	select {
	case <-u.all:
	case <-bound.C:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	work := time.NewTimer(50 * time.Millisecond)
	defer work.Stop()
	select {
	case <-work.C:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return mcp.NewToolResultText("held"), nil
}

// callsAtOnce makes calls concurrent calls of held_hold from one stdio
// client of a gateway with stdioCalls (0: the default) and returns the
// most the upstream had in flight at once.
func callsAtOnce(t *testing.T, stdioCalls, calls, want int) int64 {
	t.Helper()
	up := newHeldUpstream(want)
	h := startHubWith(t, Options{Upstreams: []UpstreamConfig{builtinFake("held")}, Builtin: up.builtin})
	srv := NewServer(ServerOptions{Hub: h, StdioCalls: stdioCalls})
	t.Cleanup(srv.Close)
	fromProxy, toProxy := stdioPipes(t, srv)
	cl, _ := newSDKClient()
	s, err := cl.Connect(t.Context(), &sdk.IOTransport{Reader: fromProxy, Writer: toProxy}, sessionEra)
	if err != nil {
		t.Fatalf("connect over stdio: %v", err)
	}
	defer s.Close()
	errs := make([]error, calls)
	var wg sync.WaitGroup
	for i := range calls {
		wg.Go(func() {
			res, err := s.CallTool(t.Context(), &sdk.CallToolParams{Name: "held_hold"})
			if err == nil && res.IsError {
				err = errors.New(resultText(res))
			}
			if err != nil {
				errs[i] = fmt.Errorf("call %d: %w", i, err)
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	return up.most.Load()
}

// A stdio client's calls run as concurrently as an HTTP session's: 16
// calls sent at once are all in flight on the upstream at once.
func TestStdioCallsRunConcurrently(t *testing.T) {
	if got := callsAtOnce(t, 0, 16, 16); got < 16 {
		t.Errorf("calls in flight on the upstream at once: got %d, want 16 (limits.stdio_calls defaults to %d)", got, DefaultStdioCalls)
	}
}

// limits.stdio_calls bounds a stdio client's calls at once; the others
// wait for a slot, and all complete.
func TestStdioCallsBoundedByOption(t *testing.T) {
	if got := callsAtOnce(t, 4, 12, 4); got != 4 {
		t.Errorf("calls in flight on the upstream at once with StdioCalls 4: got %d, want 4", got)
	}
}

// TestCallIDReadsAsMCPGoDoes checks idKey, which keys a stdio call's id
// mostly without encoding/json, and isToolCall, which reads most messages
// with the scanner, against what encoding/json (mcp-go's parser) reads.
func TestCallIDReadsAsMCPGoDoes(t *testing.T) {
	for _, raw := range []string{`7`, `7.0`, `1e2`, `-3`, `0.1`, `12345678901234567890`, `"x"`, `"7"`,
		`"a\u00e9"`, `"\u0041"`, "\"a\xffb\"", `""`} {
		var id any
		if err := json.Unmarshal([]byte(raw), &id); err != nil {
			t.Fatal(err)
		}
		if got, ok := idKey([]byte(raw)); !ok || got != idText(id) {
			t.Errorf("%s: idKey %q %v, encoding/json %q", raw, got, ok, idText(id))
		}
	}
	for _, line := range []string{
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"a"}}`,
		`{"jsonrpc":"2.0","id":"x","method":"tools\/call"}`,
		`{"jsonrpc":"2.0","ID":3,"method":"tools/call"}`,
		`{"jsonrpc":"2.0","id":null,"method":"tools/call"}`,
		`{"jsonrpc":"2.0","method":"tools/call"}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":1,"method":5}`,
		`{"jsonrpc":"2.0","id":1,"Method":"tools/call"}`,
		`not json`,
	} {
		var m struct {
			Method string `json:"method"`
		}
		err := json.Unmarshal([]byte(line), &m)
		if got, want := isToolCall(context.Background(), json.RawMessage(line)), err == nil && m.Method == "tools/call"; got != want {
			t.Errorf("%s: isToolCall %v, encoding/json %v", line, got, want)
		}
	}
}
