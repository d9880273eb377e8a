package upstream

import (
	"context"
	"log/slog"
	"os"
	"strconv"
	"testing"
	"time"
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
	env := soloEnv(&ProgressRouter{})
	env.Logger, env.BackoffMin, env.BackoffMax = slog.New(durs), backoff, backoff
	u := runOn(t, stdioFake("solo"), env)
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
