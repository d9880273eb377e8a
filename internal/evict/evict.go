// Package evict keeps maps of remembered answers within a bound.
package evict

// ToFit readies m, a map that may hold at most max entries, for one more:
// when it is full, the entries that expired says no longer hold are
// dropped, and every entry if that frees no room. A cache of answers that
// are cheap to make again stays bounded without keeping an order.
func ToFit[K comparable, V any](m map[K]V, max int, expired func(V) bool) {
	if len(m) < max {
		return
	}
	for k, v := range m {
		if expired(v) {
			delete(m, k)
		}
	}
	if len(m) >= max {
		clear(m)
	}
}
