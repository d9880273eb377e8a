package lessons

import (
	"cmp"
	"slices"

	"github.com/mcp-router/mcp-router/routing"
)

// Apply returns hits with the adjustments' deltas added to their scores,
// re-sorted best first. Only tools present in hits change: an adjustment
// for any other tool is ignored, so a lesson never brings in a tool the
// ranking did not consider. Scores are clamped to [0, 1], but the order
// follows the unclamped sums (a boosted tool at 0.9 + 0.3 passes one at
// 1.0), and the sort is stable, so that tools the lessons do not touch
// keep their relative order. A tool a person's correction applies to
// (Adjustment.Corrected) leaves the hits: a correction keeps it off the
// next hand-over for such requests, where a penalty of MaxPenalty could
// leave it first. hits is not modified; Raw is kept.
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

// adjustmentFor returns tool's adjustment in adj. A linear scan: a
// query has few adjustments.
func adjustmentFor(adj []Adjustment, tool string) (Adjustment, bool) {
	for _, a := range adj {
		if a.Tool == tool {
			return a, true
		}
	}
	return Adjustment{}, false
}
