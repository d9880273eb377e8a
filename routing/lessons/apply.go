package lessons

import (
	"cmp"
	"slices"

	"github.com/mcp-router/mcp-router/routing"
)

// Apply returns a copy of hits with the deltas added, stably re-sorted by
// the unclamped sums, scores clamped to [0, 1]. Adjustments for tools not
// in hits are ignored, so a lesson never brings in a tool the ranking did
// not consider; a Corrected tool is removed.
func Apply(hits []routing.Hit, adj []Adjustment) []routing.Hit {
	if len(hits) == 0 || len(adj) == 0 {
		return hits
	}
	type scored struct {
		hit routing.Hit
		key float64
	}
	out := make([]scored, 0, len(hits))
	changed := false
	for _, h := range hits {
		a, ok := adjustmentFor(adj, h.Name)
		if ok && a.Corrected {
			changed = true
			continue
		}
		sc := scored{hit: h, key: h.Score}
		if ok && a.Delta != 0 {
			sc.key += a.Delta
			sc.hit.Score = min(1, max(0, sc.key))
			changed = true
		}
		out = append(out, sc)
	}
	if !changed {
		return hits
	}
	slices.SortStableFunc(out, func(a, b scored) int { return cmp.Compare(b.key, a.key) })
	res := make([]routing.Hit, len(out))
	for i, s := range out {
		res[i] = s.hit
	}
	return res
}

// adjustmentFor returns tool's adjustment in adj (a query has few).
func adjustmentFor(adj []Adjustment, tool string) (Adjustment, bool) {
	for _, a := range adj {
		if a.Tool == tool {
			return a, true
		}
	}
	return Adjustment{}, false
}
