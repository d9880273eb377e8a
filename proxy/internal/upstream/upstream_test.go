package upstream

import (
	"context"
	"log/slog"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// connectedDurs is a slog handler that sends the dur of each "upstream
// connected" record.
type connectedDurs chan time.Duration

func (h connectedDurs) Enabled(context.Context, slog.Level) bool { return true }
func (h connectedDurs) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h connectedDurs) WithGroup(string) slog.Handler            { return h }
func (h connectedDurs) Handle(_ context.Context, r slog.Record) error {
	if r.Message == "upstream connected" {
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == "dur" {
				h <- a.Value.Duration()
			}
			return true
		})
	}
	return nil
}

// After a restart, "upstream connected" gives how long this attempt took,
// not the time since the first start: with a backoff longer than any
// attempt, a dur past the backoff would count the wait before it.
func TestConnectedDurIsThisAttempts(t *testing.T) {
	const backoff = 3 * time.Second // jittered to at least 0.8 of it
	durs := make(connectedDurs, 4)
	env := Env{
		Logger: slog.New(durs), Version: "test",
		InitTimeout: 5 * time.Second, BackoffMin: backoff, BackoffMax: backoff,
		RefreshDebounce: 20 * time.Millisecond, ReconnectWait: time.Second, MaxInFlight: 4, MaxQueue: 4,
		Progress: &ProgressRouter{},
		Vet: func(_ Config, _, _ *slog.Logger, tools []mcp.Tool) ([]mcp.Tool, map[string]string) {
			return tools, nil
		},
		Listed: func(*Upstream, bool) {},
	}
	u := New(stdioFake("solo"), env)
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	wg.Go(func() { u.Run(ctx) })
	t.Cleanup(func() {
		cancel()
		wg.Wait()
	})
	next := func() time.Duration {
		select {
		case d := <-durs:
			return d
		case <-time.After(60 * time.Second): // a guard against a hang, not a measure of speed
			t.Fatal("the upstream never connected")
			return 0
		}
	}
	next()
	pid, err := strconv.Atoi(allText(callSolo(t, u, "pid", nil, nil)))
	if err != nil {
		t.Fatal(err)
	}
	p, err := os.FindProcess(pid)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Kill(); err != nil {
		t.Fatal(err)
	}
	if d, limit := next(), backoff*8/10; d >= limit {
		t.Errorf("dur after a restart: got %v, want under the backoff (%v) it waited first", d, limit)
	}
}
