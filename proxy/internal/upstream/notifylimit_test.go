package upstream

import (
	"log/slog"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mcp-router/mcp-router/internal/syncbuf"
)

// At the edge: a burst of exactly Burst passes, the next is dropped, the
// bucket refills at PerSecond, one warning per window whatever the number
// dropped, and a list change is never dropped.
func TestNotificationRateLimitEdge(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs syncbuf.Buffer
		m := &countedMetrics{}
		n := newNotifyLimiter("up", NotificationLimit{PerSecond: 10, Burst: 5}, slog.New(slog.NewTextHandler(&logs, nil)), m)
		msg := string(mcp.MethodNotificationMessage)
		for i := range 5 {
			if !n.allow(msg) {
				t.Fatalf("notification %d of a burst of 5 dropped", i+1)
			}
		}
		if n.allow(msg) {
			t.Error("the 6th notification of a burst of 5 passed")
		}
		if !n.allow(string(mcp.MethodNotificationToolsListChanged)) {
			t.Error("a list change was dropped")
		}
		for range 50 {
			n.allow(string(mcp.MethodNotificationProgress))
		}
		time.Sleep(300 * time.Millisecond) // the fake clock: 3 tokens back
		passed := 0
		for range 20 {
			if n.allow(msg) {
				passed++
			}
		}
		if passed != 3 {
			t.Errorf("300ms at 10 a second: %d passed, want 3", passed)
		}
		if got := strings.Count(logs.String(), "over the rate limit"); got != 1 {
			t.Errorf("got %d warnings within one window, want 1:\n%s", got, logs.String())
		}
		time.Sleep(notificationWarnEvery)
		for range 30 {
			n.allow(msg)
		}
		if got := strings.Count(logs.String(), "over the rate limit"); got != 2 {
			t.Errorf("got %d warnings over two windows, want 2", got)
		}
		if got := m.dropped["up progress"]; got != 50 {
			t.Errorf("dropped progress: got %v, want 50", got)
		}
		// 1 after the first burst, 17 after the refill, then 30 less the 5 of a full bucket.
		if got := m.dropped["up message"]; got != 1+17+25 {
			t.Errorf("dropped messages: got %v, want 43", got)
		}
	})
}

func TestNotificationRateDefaults(t *testing.T) {
	n := newNotifyLimiter("up", NotificationLimit{}, nil, noMetrics{})
	if n.lim.Limit() != DefaultNotificationsPerSecond || n.lim.Burst() != DefaultNotificationBurst {
		t.Errorf("got %v per second and a burst of %d, want the defaults", n.lim.Limit(), n.lim.Burst())
	}
}

// countedMetrics counts the notifications dropped, by "upstream kind".
type countedMetrics struct {
	mu      sync.Mutex
	dropped map[string]int
}

func (*countedMetrics) UpstreamState(string, string) {}
func (*countedMetrics) UpstreamRestart(string)       {}
func (m *countedMetrics) NotificationDropped(upstream, kind string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.dropped == nil {
		m.dropped = map[string]int{}
	}
	m.dropped[upstream+" "+kind]++
}
