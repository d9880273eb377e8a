package fuse

import (
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
)

type discovery struct {
	allowed bool
	count   int
	open    bool // Open() right after
}

func discoverN(b *Breaker, n int) []discovery {
	var got []discovery
	for range n {
		allowed, count := b.Discover()
		got = append(got, discovery{allowed, count, b.Open()})
	}
	return got
}

func TestBreakerTripsOnThirdAndRefusesFourth(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := NewBreaker(BreakerOptions{})
		start := time.Now()
		want := []discovery{{true, 1, false}, {true, 2, false}, {true, 3, true}, {false, 4, true}, {false, 5, true}}
		if diff := cmp.Diff(want, discoverN(b, 5), cmp.AllowUnexported(discovery{})); diff != "" {
			t.Errorf("discoveries mismatch (-want +got):\n%s", diff)
		}
		wantState := BreakerState{Open: true, Discoveries: 5, Max: 3, TrippedAt: start}
		if diff := cmp.Diff(wantState, b.State()); diff != "" {
			t.Errorf("State() mismatch (-want +got):\n%s", diff)
		}
	})
}

func TestBreakerSuccessCloses(t *testing.T) {
	b := NewBreaker(BreakerOptions{})
	discoverN(b, 4)
	b.Success()
	if b.Open() {
		t.Fatal("Open() = true after Success, want false")
	}
	if diff := cmp.Diff(BreakerState{Max: 3}, b.State()); diff != "" {
		t.Errorf("State() after Success mismatch (-want +got):\n%s", diff)
	}
	if allowed, count := b.Discover(); !allowed || count != 1 {
		t.Errorf("Discover() = %v, %d; want true, 1", allowed, count)
	}
}

func TestBreakerSuccessBeforeTripRestartsCount(t *testing.T) {
	b := NewBreaker(BreakerOptions{})
	discoverN(b, 2)
	b.Success()
	got := discoverN(b, 3)
	if last := got[2]; !last.allowed || last.count != 3 || !last.open {
		t.Errorf("third discovery after Success = %+v, want allowed, count 3, open", last)
	}
}

func TestBreakerQuietResetAfterTrip(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := NewBreaker(BreakerOptions{})
		discoverN(b, 3)
		time.Sleep(DefaultResetAfter - time.Second)
		if !b.Open() {
			t.Fatal("Open() = false a second before ResetAfter, want true")
		}
		time.Sleep(time.Second)
		if b.Open() {
			t.Fatal("Open() = true after ResetAfter of quiet, want false")
		}
		if allowed, count := b.Discover(); !allowed || count != 1 {
			t.Errorf("Discover() after quiet reset = %v, %d; want true, 1", allowed, count)
		}
	})
}

func TestBreakerRefusedCallsAreNotQuiet(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := NewBreaker(BreakerOptions{MaxDiscoveries: 1, ResetAfter: 10 * time.Second})
		b.Discover()
		time.Sleep(8 * time.Second)
		if allowed, _ := b.Discover(); allowed {
			t.Fatal("Discover() allowed while open")
		}
		time.Sleep(8 * time.Second) // 16s since the trip, 8s since the refusal
		if !b.Open() {
			t.Fatal("Open() = false 8s after a refused call, want true")
		}
		time.Sleep(2 * time.Second)
		if b.Open() {
			t.Error("Open() = true 10s after the last call, want false")
		}
	})
}

func TestBreakerCountDoesNotDecayBeforeTrip(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := NewBreaker(BreakerOptions{})
		discoverN(b, 2)
		time.Sleep(time.Hour)
		if allowed, count := b.Discover(); !allowed || count != 3 || !b.Open() {
			t.Errorf("Discover() after an hour = %v, %d, open %v; want true, 3, open", allowed, count, b.Open())
		}
	})
}

func TestBreakerNowOption(t *testing.T) {
	at := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	b := NewBreaker(BreakerOptions{MaxDiscoveries: 1, Now: func() time.Time { return at }})
	b.Discover()
	if got := b.State().TrippedAt; !got.Equal(at) {
		t.Errorf("TrippedAt = %v, want %v", got, at)
	}
}

func TestBreakerConcurrentDiscoverAllowsExactlyMax(t *testing.T) {
	b := NewBreaker(BreakerOptions{MaxDiscoveries: 5})
	var allowed atomic.Int32
	var wg sync.WaitGroup
	for range 64 {
		wg.Go(func() {
			if ok, _ := b.Discover(); ok {
				allowed.Add(1)
			}
			b.Open()
			b.State()
		})
	}
	wg.Wait()
	if got := allowed.Load(); got != 5 {
		t.Errorf("allowed %d discoveries, want 5", got)
	}
	if s := b.State(); !s.Open || s.Discoveries != 64 {
		t.Errorf("State() = %+v, want open with 64 discoveries", s)
	}
}

func TestBreakerConcurrentMixedUse(t *testing.T) {
	b := NewBreaker(BreakerOptions{})
	var wg sync.WaitGroup
	for i := range 32 {
		wg.Go(func() {
			for range 50 {
				b.Discover()
				if i%4 == 0 {
					b.Success()
				}
				if s := b.State(); s.Open != (s.Discoveries >= s.Max) {
					t.Errorf("inconsistent state %+v", s)
				}
			}
		})
	}
	wg.Wait()
}

// A breaker given no bounds (a profile without breaker settings) trips at
// the 3rd discovery and resets after 2m (docs/reference.md).
func TestBreakerDefaults(t *testing.T) {
	if b := NewBreaker(BreakerOptions{}); b.max != 3 || b.resetAfter != 2*time.Minute {
		t.Errorf("got max %d, reset after %s, want 3 and 2m", b.max, b.resetAfter)
	}
}
