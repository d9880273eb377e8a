package fuse

import (
	"sync"
	"time"

	"github.com/mcp-router/mcp-router/internal/defaults"
)

// Breaker defaults.
const (
	DefaultMaxDiscoveries = 3
	DefaultResetAfter     = 2 * time.Minute
)

// BreakerOptions configures a [Breaker].
type BreakerOptions struct {
	// MaxDiscoveries is how many request_more_tools calls are allowed
	// between successful tool calls [3].
	MaxDiscoveries int
	// ResetAfter is how long a tripped breaker must go without a Discover
	// call to close by itself [2m].
	ResetAfter time.Duration
	// Now returns the current time; nil means time.Now.
	Now func() time.Time
}

// BreakerState is a snapshot of a [Breaker] for traces.
type BreakerState struct {
	Open bool `json:"open"`
	// Discoveries counts Discover calls since the last reset, refused ones too.
	Discoveries int       `json:"discoveries"`
	Max         int       `json:"max"`
	TrippedAt   time.Time `json:"tripped_at,omitzero"`
}

// Breaker is a session's discovery circuit breaker: it stops a model from
// calling request_more_tools in a loop. It is safe for concurrent use. The
// MaxDiscoveries-th discovery trips it (Open: the proxy takes the tool off
// the belt) and later ones are refused. Success closes it and zeroes the
// count, and so does ResetAfter without a Discover call once tripped.
type Breaker struct {
	max        int
	resetAfter time.Duration
	now        func() time.Time

	mu sync.Mutex
	st BreakerSnapshot // the count, the latest Discover call, when it tripped
}

// NewBreaker returns a closed breaker, applying the defaults in opts.
func NewBreaker(opts BreakerOptions) *Breaker {
	b := &Breaker{max: opts.MaxDiscoveries, resetAfter: opts.ResetAfter, now: opts.Now}
	defaults.Set(&b.max, DefaultMaxDiscoveries)
	defaults.Set(&b.resetAfter, DefaultResetAfter)
	if b.now == nil {
		b.now = time.Now
	}
	return b
}

// Discover counts one discovery and reports whether it may go ahead, with
// the count so far.
func (b *Breaker) Discover() (allowed bool, count int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.now()
	b.expire(now)
	b.st.Count++
	b.st.Last = now
	if b.st.Count == b.max {
		b.st.TrippedAt = now
	}
	return b.st.Count <= b.max, b.st.Count
}

// Success records a successful real tool call, closing the breaker.
func (b *Breaker) Success() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.reset()
}

// Open reports whether the breaker is tripped (after ResetAfter's check).
func (b *Breaker) Open() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.expire(b.now())
	return b.open()
}

// State returns a snapshot, after the same quiet-reset check as Open.
func (b *Breaker) State() BreakerState {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.expire(b.now())
	return BreakerState{Open: b.open(), Discoveries: b.st.Count, Max: b.max, TrippedAt: b.st.TrippedAt}
}

func (b *Breaker) open() bool { return b.st.Count >= b.max }

func (b *Breaker) expire(now time.Time) {
	if b.open() && now.Sub(b.st.Last) >= b.resetAfter {
		b.reset()
	}
}

func (b *Breaker) reset() { b.st = BreakerSnapshot{} }

// BreakerSnapshot is a Breaker's state, to go on in another process.
type BreakerSnapshot struct {
	Count     int       // Discover calls since the last reset
	Last      time.Time // the latest Discover call
	TrippedAt time.Time // zero while closed
}

// Snapshot returns the breaker's state for Restore.
func (b *Breaker) Snapshot() BreakerSnapshot {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.st
}

// Restore sets the breaker to a snapshot, its count within the maximum.
func (b *Breaker) Restore(s BreakerSnapshot) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.st = s
	b.st.Count = min(max(s.Count, 0), b.max)
}
