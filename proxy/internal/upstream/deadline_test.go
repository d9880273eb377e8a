package upstream

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

// A call's deadlines (FI-06), on the fake clock of a synctest bubble.

func TestIdleTimeoutRestartsOnTouch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := withCallTimeouts(t.Context(), time.Second, 0)
		defer cancel()
		for range 5 { // 5s in all, never a second without a touch
			time.Sleep(900 * time.Millisecond)
			ctx.touch()
		}
		if err := ctx.Err(); err != nil {
			t.Fatalf("touched every 900ms under a 1s idle timeout: %v", err)
		}
		start := time.Now()
		<-ctx.Done()
		if d := time.Since(start); d != time.Second || !errors.Is(ctx.Err(), context.DeadlineExceeded) {
			t.Errorf("untouched: done after %s with %v, want 1s and a deadline error", d, ctx.Err())
		}
		if out, touched := ctx.idleOut(); !out || !touched {
			t.Errorf("idleOut: %v, %v; want the idle time out, after a touch", out, touched)
		}
	})
}

func TestIdleTimeoutEndsWithItsParent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		parent, cancelParent := context.WithCancel(t.Context())
		ctx, cancel := withCallTimeouts(parent, time.Minute, 0)
		defer cancel()
		child, cancelChild := context.WithCancel(ctx) // as mcp-go derives its own
		defer cancelChild()
		cancelParent()
		<-child.Done()
		if !errors.Is(ctx.Err(), context.Canceled) {
			t.Errorf("after the parent's cancel: %v, want context.Canceled", ctx.Err())
		}
		if out, _ := ctx.idleOut(); out {
			t.Error("idleOut after the parent ended, want false")
		}
	})
}

func TestCallDeadlineSaysWhichLimit(t *testing.T) {
	cfg := Config{Timeout: time.Second, MaxTimeout: 3 * time.Second}
	cases := []struct {
		name    string
		touches int // progress reports, one every 900ms
		after   time.Duration
		want    string
	}{
		{"idle, no progress", 0, time.Second, "no answer within 1s"},
		{"idle after progress", 2, 2800 * time.Millisecond, "no answer within 1s of its last progress report"},
		{"hard maximum", 10, 3 * time.Second, "no answer within the hard maximum of 3s (max_timeout)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				d, cancel := newCallDeadline(t.Context(), cfg)
				defer cancel()
				start := time.Now()
				go func() { // progress reports, until the call ends
					for range tc.touches {
						select {
						case <-time.After(900 * time.Millisecond):
							d.touch()
						case <-d.Done():
							return
						}
					}
				}()
				<-d.Done()
				err := d.expired(t.Context())
				if got := time.Since(start); got != tc.after {
					t.Errorf("cut after %s, want %s", got, tc.after)
				}
				if err == nil || err.Error() != tc.want || !errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("got %v, want %q (a deadline error)", err, tc.want)
				}
			})
		})
	}
}

func TestCallDeadlineCallerGoneIsNoTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		caller, cancelCaller := context.WithCancel(t.Context())
		d, cancel := newCallDeadline(caller, Config{Timeout: time.Second})
		defer cancel()
		cancelCaller()
		<-d.Done()
		if err := d.expired(caller); err != nil {
			t.Errorf("the caller went away: got %v, want no timeout", err)
		}
	})
}

func TestMaxTimeoutDefaults(t *testing.T) {
	for _, tc := range []struct {
		timeout, max, want time.Duration
	}{
		{0, 0, DefaultMaxCallTimeout},
		{time.Second, 0, DefaultMaxCallTimeout},
		{time.Hour, 0, time.Hour},
		{time.Second, 5 * time.Second, 5 * time.Second},
		{time.Minute, time.Second, time.Minute}, // never below the timeout
	} {
		u := Config{Timeout: tc.timeout, MaxTimeout: tc.max}
		if got := u.EffectiveMaxTimeout(); got != tc.want {
			t.Errorf("timeout %s, max_timeout %s: got %s, want %s", tc.timeout, tc.max, got, tc.want)
		}
	}
}
