package main

import (
	"io"
	"log/slog"
	"math"
	"runtime/debug"
	"testing"
)

// TestTuneGC checks that serve raises GOGC only under a memory limit and
// only when GOGC is not set.
func TestTuneGC(t *testing.T) {
	oldLimit, oldPercent := debug.SetMemoryLimit(-1), debug.SetGCPercent(-1)
	debug.SetGCPercent(oldPercent)
	t.Cleanup(func() {
		debug.SetMemoryLimit(oldLimit)
		debug.SetGCPercent(oldPercent)
	})
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	for _, tc := range []struct {
		name  string
		limit int64
		env   map[string]string
		want  bool
	}{
		{"no limit", math.MaxInt64, nil, false},
		{"limit", 512 << 20, nil, true},
		{"limit and GOGC", 512 << 20, map[string]string{"GOGC": "100"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			debug.SetMemoryLimit(tc.limit)
			debug.SetGCPercent(100)
			getenv := func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok }
			got := tuneGC(getenv, log)
			percent := debug.SetGCPercent(100)
			if got != tc.want || (percent == gcPercentUnderLimit) != tc.want {
				t.Errorf("tuned %v (GOGC %d), want %v", got, percent, tc.want)
			}
		})
	}
}
