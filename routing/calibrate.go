package routing

import "math"

// Calibration (decision 5 in docs/design.md). A raw BM25F score depends
// on the catalog, so the router's fixed threshold, noise floor and
// collision delta cannot apply to it. A Hit's Score comes instead from
// two catalog-independent quantities:
//
//   - coverage: the tool's score over the request's reach (the score of a
//     tool of average length with every word of the request once in its
//     name), capped at 1. A word matched only through a synonym counts at
//     calibSynonym of what the synonym adds; a word the catalog does not
//     know counts in the reach at calibUnknown of the rarest word's weight
//     (it is a value, or the very thing no tool does). For a request of
//     several clauses, the best of the whole request and each clause.
//   - relative: the raw score over the top tool's (in that clause).
//
// Score = σ(b0 + b1·ln(max(coverage, 0.01)) + b2·relative), so that a top
// tool matching little of the request scores near 0; docs/routing.md says
// how the constants were fitted and how to refit them. Where coverage does
// not fall with rank (synonyms, clauses), each score is capped by the one
// above it.
const (
	calibIntercept = -6.870 // fitted -9.050, moved up (docs/routing.md)
	calibCoverage  = 1.261  // on ln(coverage)
	calibRelative  = 9.075
	calibMinCover  = 0.01 // coverage below this counts as this
	calibSynonym   = 0.1  // share of a synonym's gain that coverage counts
	calibUnknown   = 0.35 // weight of an unknown request word in the reach
)

// evidence is what a tool's calibrated score is computed from.
type evidence struct {
	coverage float64 // share of the request (or best clause) matched, in [0, 1]
	relative float64 // raw score over the top tool's, in [0, 1]
}

// calibrate maps evidence to a score in [0, 1].
func calibrate(e evidence) float64 {
	z := calibIntercept + calibCoverage*math.Log(max(e.coverage, calibMinCover)) + calibRelative*e.relative
	return 1 / (1 + math.Exp(-z))
}

// synonymLoss returns what coverage does not count of c, a term group's
// contribution to a tool's score, of which ce comes from the request's own
// word: all but calibSynonym of what synonyms add.
func synonymLoss(c, ce float32) float32 {
	return (1 - calibSynonym) * (c - ce)
}

// termCeiling is the BM25F contribution, per unit of IDF, of a term found
// once in the heaviest field of a document of average length.
func (ix *Index) termCeiling() float64 {
	w := 0.0
	for _, x := range ix.opts.Weights.array() {
		w = max(w, x)
	}
	return w / (ix.opts.K1 + w) // BM25's saturation of a frequency of w
}

// hit returns doc as a Hit with its calibrated score, and appends e to ev
// when ev is not nil.
func (ix *Index) hit(doc int32, raw float32, e evidence, ev *[]evidence) Hit {
	if ev != nil {
		*ev = append(*ev, e)
	}
	return Hit{Name: ix.docs[doc].tool.Name, Score: calibrate(e), Raw: float64(raw), Coverage: e.coverage}
}
