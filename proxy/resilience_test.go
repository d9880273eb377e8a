package proxy

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcp-router/mcp-router/internal/fakeupstream"
)

// FI-08: a slow upstream's excess calls queue and then fail fast with
// queue_full; another upstream's calls are not held up.
func TestFI08HeadOfLineIsolation(t *testing.T) {
	h := NewHub(Options{Upstreams: []UpstreamConfig{builtinFake("slow"), builtinFake("fast")}, Builtin: fakeBuiltins,
		MaxInFlight: 2, MaxQueue: 1})
	if err := h.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
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
			if !errors.As(err, &ue) || ue.Kind != KindQueueFull {
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
		return errors.As(err, &ue) && ue.Kind == KindCircuitOpen
	})
	os.Remove(crash)
	eventually(t, 10*time.Second, "recovery after the fix", func() bool {
		res, err := h.CallTool(t.Context(), "loop_echo", map[string]any{"text": "back"}, nil)
		return err == nil && !res.IsError
	})
}
