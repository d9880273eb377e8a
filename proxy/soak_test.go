package proxy

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestSoak sends 10,000 calls at concurrency 32 through the hub to a stdio
// upstream that is made to crash now and then, and to an in-process one.
// Every call must be answered (a result, or a clear upstream error), and
// goroutines and heap must come back to where they were.
func TestSoak(t *testing.T) {
	if testing.Short() {
		t.Skip("soak test")
	}
	const calls, conc, crashEvery = 10000, 32, 1000
	h := startHub(t, stdioFake("soak"), builtinFake("steady"))
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	goroutines := runtime.NumGoroutine()

	var next, answered, failed atomic.Int64
	kinds := sync.Map{}
	lat := make([]time.Duration, calls)
	var wg sync.WaitGroup
	for range conc {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= calls {
					return
				}
				tool, args := "soak_echo", map[string]any{"text": fmt.Sprint(i)}
				switch {
				case i%crashEvery == crashEvery-1:
					tool, args = "soak_crash", nil
				case i%3 == 0:
					tool = "steady_echo"
				}
				start := time.Now()
				res, err := h.CallTool(t.Context(), tool, args, nil)
				lat[i] = time.Since(start)
				var ue *UpstreamError
				switch {
				case err == nil && res != nil:
					answered.Add(1)
				case errors.As(err, &ue):
					failed.Add(1)
					n, _ := kinds.LoadOrStore(ue.Kind, new(atomic.Int64))
					n.(*atomic.Int64).Add(1)
				default:
					t.Errorf("call %d (%s): unclassified answer %v %v", i, tool, res, err)
				}
			}
		})
	}
	wg.Wait()
	slices.Sort(lat)
	var summary []string
	kinds.Range(func(k, v any) bool {
		summary = append(summary, fmt.Sprintf("%s=%d", k, v.(*atomic.Int64).Load()))
		return true
	})
	if got := answered.Load() + failed.Load(); got != calls {
		t.Fatalf("%d of %d calls answered", got, calls)
	}
	h.Close()
	var after runtime.MemStats
	eventually(t, 10*time.Second, "goroutines back to the baseline", func() bool {
		return runtime.NumGoroutine() <= goroutines
	})
	runtime.GC()
	runtime.ReadMemStats(&after)
	t.Logf("soak: %d calls at concurrency %d: %d results, %d upstream errors (%v); p50 %s, p99 %s; goroutines %d -> %d; heap %.1f -> %.1f MiB",
		calls, conc, answered.Load(), failed.Load(), summary, lat[calls/2], lat[calls*99/100],
		goroutines, runtime.NumGoroutine(), float64(before.HeapAlloc)/(1<<20), float64(after.HeapAlloc)/(1<<20))
	if growth := int64(after.HeapAlloc) - int64(before.HeapAlloc); growth > 32<<20 {
		t.Errorf("heap grew by %d MiB over the soak", growth>>20)
	}
	// Only the calls in flight when the child dies fail (FI-01: no retry);
	// calls that arrive while it restarts wait for it.
	if crashes := calls / crashEvery; failed.Load() > int64(crashes*(conc+8)) {
		t.Errorf("%d of %d calls failed; %d crashes at concurrency %d should cost at most about %d",
			failed.Load(), calls, crashes, conc, crashes*(conc+8))
	}
}
