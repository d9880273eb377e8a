package proxy

import (
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// A first pinning is one line per upstream, not one per tool.
func TestFirstPinningLogsOneSummary(t *testing.T) {
	store := sharedPins(t, t.TempDir())
	var logs syncBuffer
	h := startHubWith(t, Options{
		Upstreams: []UpstreamConfig{builtinFake("alpha")}, Builtin: fakeBuiltins, Pins: store,
		Logger: slog.New(slog.NewTextHandler(&logs, nil)),
	})
	n := len(h.Catalog().Tools)
	text := logs.String()
	if c := strings.Count(text, "new tools"); c != 1 || !strings.Contains(text, fmt.Sprintf("pinned %d new tools", n)) || n < 2 {
		t.Errorf("%d tools; summary lines %d, want 1:\n%s", n, c, text)
	}
	if strings.Contains(text, "tool pinned") {
		t.Errorf("a line per tool at info level:\n%s", text)
	}
	if got := summarizeNames([]string{"g", "f", "e", "d", "c", "b", "a"}); got != "a,b,c,d,e and 2 more" {
		t.Errorf("summarizeNames: got %q", got)
	}
}

// FI-03: a crash-looping child process prints its trace once into the
// log, not once per restart, and the upstream attribute appears once per record.
func TestCrashLoopStderrLoggedOnce(t *testing.T) {
	var logs syncBuffer
	h := newFaultHub(t, Options{
		Upstreams: []UpstreamConfig{{Name: "crashy", Transport: TransportStdio, Prefix: "crashy_", Command: "sh",
			Args: []string{"-c", `echo "fatal: cannot start (pid $$)" >&2; echo "  at server.js:3" >&2; exit 3`}}},
		Logger: slog.New(slog.NewTextHandler(&logs, nil)),
	})
	if err := h.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	eventually(t, 20*time.Second, "four restarts", func() bool { return statusOf(h, "crashy").Restarts >= 4 })
	h.Close()
	text := logs.String()
	if n := strings.Count(text, `msg="upstream stderr" upstream=crashy line="fatal: cannot start`); n != 1 {
		t.Errorf("the trace was logged %d times over %d restarts, want once:\n%s", n, statusOf(h, "crashy").Restarts, text)
	}
	if !strings.Contains(text, "same output as before") {
		t.Errorf("no repeat count logged:\n%s", text)
	}
	for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
		if n := strings.Count(line, "upstream=crashy"); n > 1 {
			t.Errorf("upstream= given %d times in %s", n, line)
		}
	}
}
