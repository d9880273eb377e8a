package routing

import "math"

// Calibration (decision 5 in docs/design.md). A raw BM25F score is
// unbounded and depends on the catalog (its size, its IDFs, its field
// lengths), so the router's fixed threshold (0.35), noise floor (0.2) and
// collision delta (0.08) cannot apply to it. A Hit's Score is instead
// computed from two catalog-independent quantities:
//
//   - coverage: the share of the request the tool matches, its score over
//     the request's reach: the score of a tool of average length with every
//     word of the request once in its name (the heaviest field),
//     Σ_t idf(t)·w/(k1+w), capped at 1. Two things keep a weak match from
//     passing for a good one. A word matched only through a lexicon
//     synonym counts at calibSynonym of what the synonym adds ("book"
//     found as "reservation" is evidence, not a match). And a request word
//     that the catalog knows neither directly nor through a synonym counts
//     in the reach at calibUnknown of the weight of the rarest possible
//     word: it is an argument value, or the very thing asked for when no
//     tool does it ("flight" in a catalog of file tools); leaving it out
//     made a tool matching the one common word of such a request cover it
//     all. For a request of several clauses coverage is the best of the
//     tool's coverage of the whole request and of each clause, since a
//     tool that does all one clause asks is relevant however long the
//     request.
//   - relative: the raw score over the top tool's raw score for the
//     request (or for that clause); 1 for the top tool.
//
// Score = σ(b0 + b1·ln(max(coverage, 0.01)) + b2·relative): the odds grow
// as a power of coverage, so that a top tool matching little of the
// request scores near 0 however the rest of the catalog does. (The former
// σ(b0 + b1·coverage + b2·relative) scored every top tool at least 0.28,
// so the router's "no tool matches" could never be said.)
//
// The constants come from a logistic regression of whether a tool in the
// top 10 is a wanted one, on bfcl, seal_tools and metatool, over each
// query's ranking of the whole catalog and of the catalog without its
// gold tools (Index.Without); the intercept is then moved up so that the
// gold top-1 tool keeps 0.35 or more. To refit, with the benchmark present:
// go test ./routing/ -run TestFitCalibration -v -args -fit
//
// The top tool of a request scores 0.90 at full coverage, 0.79 at half,
// 0.54 at a fifth, 0.35 at a tenth and 0.2 at 6%; a tool at 0.9 of the
// top tool's raw score, 0.79 at full coverage and 0.60 at half. Below the
// noise floor fall top tools that match almost nothing of the request:
// through synonyms only, or through one common word of a longer request.
// A word that is most of what the catalog knows of a request still passes
// ("send a postcard to grandma" finds an email tool by "send"), and so do
// near misses: with its gold tools held out, the top tool of a benchmark
// query still passes the floor nearly always (TestBenchHoldOut in
// routing/eval), being mostly a sibling of the gold tool (another
// player-statistics or future-value tool) that neither coverage nor
// relative, the synonym or unknown share or the request's length tells
// from a gold tool without also dropping gold tools. Scores fall with
// rank, as relative does; where coverage does not (synonyms, clauses)
// each is capped by the score above it.
const (
	calibIntercept = -6.870 // fitted -9.050, moved as above
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
	return saturate(w, ix.opts.K1)
}

// hit returns doc as a Hit with its calibrated score, and appends e to ev
// when ev is not nil.
func (ix *Index) hit(doc int32, raw float32, e evidence, ev *[]evidence) Hit {
	if ev != nil {
		*ev = append(*ev, e)
	}
	return Hit{Name: ix.docs[doc].tool.Name, Score: calibrate(e), Raw: float64(raw), Coverage: e.coverage}
}
