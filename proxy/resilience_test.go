package proxy

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-router/mcp-router/internal/fakeupstream"
	"github.com/mcp-router/mcp-router/proxy/call"
)

// FI-08: a slow upstream's excess calls queue and then fail fast with
// queue_full; another upstream's calls are not held up.
func TestFI08HeadOfLineIsolation(t *testing.T) {
	h := startHubWith(t, Options{Upstreams: []UpstreamConfig{builtinFake("slow"), builtinFake("fast")}, Builtin: fakeBuiltins,
		MaxInFlight: 2, MaxQueue: 1})
	results := make(chan error, 5)
	for range 5 {
		go func() {
			_, err := h.CallTool(t.Context(), "slow_sleep", map[string]any{"ms": 1000}, nil)
			results <- err
		}()
	}
	// Two are refused at once; meanwhile the fast upstream answers at once.
	for range 2 {
		select {
		case err := <-results:
			var ue *UpstreamError
			if !errors.As(err, &ue) || ue.Kind != call.KindQueueFull {
				t.Fatalf("an early answer: %v, want queue_full", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("no call refused with queue_full")
		}
	}
	start := time.Now()
	if got := callText(t, h, "fast_echo", map[string]any{"text": "quick"}); got != "quick" {
		t.Errorf("fast upstream: %q", got)
	}
	if d := time.Since(start); d > 500*time.Millisecond {
		t.Errorf("fast upstream took %s while the slow one was saturated", d)
	}
	for range 3 {
		if err := <-results; err != nil {
			t.Errorf("a slow call that had a slot or a queue place failed: %v", err)
		}
	}
}

// FI-03: an upstream that dies at every start opens its circuit: calls
// fail fast with circuit_open, and it recovers when fixed.
func TestFI03CrashLoopOpensTheCircuit(t *testing.T) {
	crash := filepath.Join(t.TempDir(), "crash")
	up := stdioFake("loop")
	up.Env[fakeupstream.CrashFileEnvVar] = crash
	h := startHub(t, up)
	if err := os.WriteFile(crash, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	h.CallTool(t.Context(), "loop_crash", nil, nil)
	eventually(t, 10*time.Second, "circuit_open", func() bool {
		_, err := h.CallTool(t.Context(), "loop_echo", map[string]any{"text": "x"}, nil)
		var ue *UpstreamError
		return errors.As(err, &ue) && ue.Kind == call.KindCircuitOpen
	})
	os.Remove(crash)
	eventually(t, 10*time.Second, "recovery after the fix", func() bool {
		res, err := h.CallTool(t.Context(), "loop_echo", map[string]any{"text": "back"}, nil)
		return err == nil && !res.IsError
	})
}

// FI-11: an upstream message over the limit fails that call with
// message_too_large, the child is restarted (its framing is lost), and
// the next call succeeds; memory never holds more than the limit.
func TestFI11OversizedUpstreamMessage(t *testing.T) {
	up := stdioFake("huge")
	up.MaxMessageBytes = 1 << 20
	h := startHub(t, up, builtinFake("other"))
	pid := callText(t, h, "huge_pid", nil)
	_, err := h.CallTool(t.Context(), "huge_big", map[string]any{"bytes": 2 << 20}, nil)
	var ue *UpstreamError
	if !errors.As(err, &ue) || ue.Kind != call.KindTooLarge {
		t.Fatalf("a 2 MiB result with a 1 MiB limit: %v, want message_too_large", err)
	}
	if got := callText(t, h, "other_echo", map[string]any{"text": "fine"}); got != "fine" {
		t.Errorf("another upstream: %q", got)
	}
	eventually(t, 10*time.Second, "the upstream restarted", func() bool {
		res, err := h.CallTool(t.Context(), "huge_pid", nil, nil)
		return err == nil && !res.IsError && mcp.GetTextFromContent(res.Content[0]) != pid
	})
	if got := callText(t, h, "huge_big", map[string]any{"bytes": 1000}); len(got) != 1000 {
		t.Errorf("a small result after the restart: %d bytes", len(got))
	}
}

// rawUpstream is a stdio upstream in sh that speaks JSON-RPC by hand:
// it answers initialize and tools/list, and calls to three tools: both,
// answered with both a result and an error (FI-09 d); batch, answered
// inside a batch (FI-09 f); and pid, its process id.
func rawUpstream(name string) UpstreamConfig {
	const script = `
tools='[{"name":"both","inputSchema":{"type":"object"}},{"name":"batch","inputSchema":{"type":"object"}},{"name":"pid","inputSchema":{"type":"object"}}]'
while IFS= read -r line; do
  id=${line#*'"id":'}; id=${id%%,*}
  case $line in
  *'"method":"initialize"'*)
    printf '{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"raw","version":"1"}}}\n' "$id";;
  *'"method":"tools/list"'*)
    printf '{"jsonrpc":"2.0","id":%s,"result":{"tools":%s}}\n' "$id" "$tools";;
  *'"name":"both"'*)
    printf '{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"partial"}]},"error":{"code":-1,"message":"and failed"}}\n' "$id";;
  *'"name":"batch"'*)
    printf '[{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"batched"}]}}]\n' "$id";;
  *'"name":"pid"'*)
    printf '{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"%s"}]}}\n' "$id" "$$";;
  esac
done`
	return UpstreamConfig{Name: name, Transport: TransportStdio, Command: "sh", Args: []string{"-c", script}, Prefix: name + "_"}
}

// FI-09: malformed lines from a stdio upstream are held back, logged and
// counted; the connection survives a few. A response with both a result
// and an error (d), or sent in a batch (f), fails its call at once with
// upstream_protocol_error. Past upstream.MaxViolations within violationWindow the
// upstream is restarted.
func TestFI09MalformedUpstreamLines(t *testing.T) {
	h := startHub(t, stdioFake("noisy"), rawUpstream("raw"))
	pid := callText(t, h, "noisy_pid", nil)
	// (a) not JSON, (b) not JSON-RPC, (c) JSON-RPC 1.0, (e) an unknown id
	// (dropped, not counted), (f) a batch answering nothing: 4 violations.
	if got := callText(t, h, "noisy_garbage", nil); got != "wrote garbage" {
		t.Errorf("the call that wrote garbage: %q", got)
	}
	if got := callText(t, h, "noisy_pid", nil); got != pid {
		t.Errorf("the upstream was restarted after malformed lines (pid %s, was %s)", got, pid)
	}

	rawPID := callText(t, h, "raw_pid", nil)
	for _, tc := range []struct{ tool, why string }{
		{"raw_both", "both a result and an error"},
		{"raw_batch", "batch"},
	} {
		start := time.Now()
		res, err := h.CallTool(t.Context(), tc.tool, nil, nil)
		if res != nil {
			t.Errorf("%s gave a result: %v", tc.tool, res.Content)
		}
		ue := wantKind(t, tc.tool, err, call.KindProtocol)
		if ue.Upstream != "raw" || !strings.Contains(ue.Error(), tc.why) {
			t.Errorf("%s: error %q, want it to name upstream raw and say %q", tc.tool, ue, tc.why)
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("%s failed after %s, want at once", tc.tool, d)
		}
	}
	if got := callText(t, h, "raw_pid", nil); got != rawPID {
		t.Errorf("raw was restarted after two broken responses (pid %s, was %s)", got, rawPID)
	}

	// 4 more violations make 8 within the window: noisy is restarted.
	h.CallTool(t.Context(), "noisy_garbage", nil, nil)
	eventually(t, 10*time.Second, "noisy restarted", func() bool {
		res, err := h.CallTool(t.Context(), "noisy_pid", nil, nil)
		return err == nil && !res.IsError && mcp.GetTextFromContent(res.Content[0]) != pid
	})
}

// FI-15: a list_changed storm is coalesced: a few re-listings, not a
// thousand.
func TestFI15ListChangedStorm(t *testing.T) {
	h := startHub(t, stdioFake("stormy"))
	before, _ := strconv.Atoi(callText(t, h, "stormy_list_calls", nil))
	callText(t, h, "stormy_storm", map[string]any{"n": 1000})
	relistings := func() int {
		after, _ := strconv.Atoi(callText(t, h, "stormy_list_calls", nil))
		return after - before
	}
	eventually(t, 5*time.Second, "a re-listing after the storm", func() bool { return relistings() >= 1 })
	if got := relistings(); got > 10 {
		t.Errorf("1000 list_changed notifications caused %d re-listings, want a few", got)
	}
}
