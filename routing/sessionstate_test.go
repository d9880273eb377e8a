package routing

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// A session restored from another's state (passed through JSON, as in a
// handle) goes on where it stopped: its domain context, its breaker (open
// stays open, and reset_after still counts from the last discovery) and
// its detour, whose lesson the next successful call yields.
func TestRestoredSessionGoesOnWhereItStopped(t *testing.T) {
	now := time.Unix(1_000, 0)
	opts := SessionOptions{MaxDiscoveries: 2, ResetAfter: time.Minute, Now: func() time.Time { return now }}
	r := testRouter(t, RouterOptions{})
	ctx := context.Background()
	s := r.NewSession(opts)
	s.Discover(ctx, Request{Query: "show disk space"})
	s.Discover(ctx, Request{Query: "disk usage"})
	b, err := json.Marshal(s.State())
	if err != nil {
		t.Fatal(err)
	}
	var st SessionState
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatal(err)
	}
	back := r.RestoreSession(opts, st)
	if !cmp.Equal(back.Domains(), s.Domains()) || len(back.Belt()) != 0 {
		t.Errorf("restored domains %v (was %v), belt %v: want the domains and an empty belt", back.Domains(), s.Domains(), back.Belt())
	}
	if _, err := back.Discover(ctx, Request{Query: "logs"}); !errors.Is(err, ErrBreakerOpen) {
		t.Errorf("third discovery of a restored session with max 2: %v, want ErrBreakerOpen", err)
	}
	now = now.Add(2 * time.Minute)
	if back.BreakerOpen() {
		t.Error("the restored breaker did not reset after reset_after of quiet")
	}
	if eff := back.Called("sys_disk_usage", true); eff.Detour != "show disk space" {
		t.Errorf("detour after restoring: %q, want the first query", eff.Detour)
	}
	over := st
	over.Breaker.Count, over.Breaker.Last = 1000, now
	over.Domains = []string{"a", "b", "c", "d", "e"}
	if big := r.RestoreSession(opts, over); big.breaker.State().Discoveries != 2 || len(big.Domains()) != 3 {
		t.Errorf("restoring out-of-range state: %d discoveries, %d domains; want at most 2 and 3", big.breaker.State().Discoveries, len(big.Domains()))
	}
}
