package upstream

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

// The connect limit, on the fake clock of a synctest bubble: a child busy
// at each look is given another limit, up to ConnectStretch limits; one
// idle for a whole limit is cut at the end of it.
func TestConnectLimitStretchesWhileBusy(t *testing.T) {
	for _, tc := range []struct {
		name      string
		busyLooks int // looks at which the child had worked since the last
		want      time.Duration
	}{
		{name: "idle", busyLooks: 0, want: 10 * time.Second},
		{name: "busy for two limits, then idle", busyLooks: 2, want: 30 * time.Second},
		{name: "busy all along", busyLooks: 100, want: ConnectStretch * 10 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var work uint64
				looks := 0
				u := New(Config{Name: "slow", Transport: TransportStdio, ConnectTimeout: 10 * time.Second}, Env{Logger: quiet})
				c := &Conn{work: func() uint64 {
					if looks++; looks <= tc.busyLooks+1 { // the first look is the baseline
						work++
					}
					return work
				}}
				ctx, cancel := u.withConnectLimit(t.Context(), c)
				defer cancel()
				start := time.Now()
				<-ctx.Done()
				if d := time.Since(start); d != tc.want || !errors.Is(ctx.Err(), context.DeadlineExceeded) {
					t.Errorf("done after %s with %v, want %s and a deadline error", d, ctx.Err(), tc.want)
				}
			})
		})
	}
}
