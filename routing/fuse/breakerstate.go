package fuse

import "time"

// BreakerSnapshot is what a Breaker needs to go on in another process or
// after a pause: a client that carries its state between calls (a handle)
// hands it back.
type BreakerSnapshot struct {
	Count     int       // Discover calls since the last reset
	Last      time.Time // the latest Discover call
	TrippedAt time.Time // zero while closed
}

// Snapshot returns the breaker's state for Restore.
func (b *Breaker) Snapshot() BreakerSnapshot {
	b.mu.Lock()
	defer b.mu.Unlock()
	return BreakerSnapshot{Count: b.count, Last: b.last, TrippedAt: b.trippedAt}
}

// Restore sets the breaker to a snapshot; a count past the maximum is
// taken as the maximum.
func (b *Breaker) Restore(s BreakerSnapshot) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.count, b.last, b.trippedAt = min(max(s.Count, 0), b.max), s.Last, s.TrippedAt
}
