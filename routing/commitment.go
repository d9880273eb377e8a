package routing

import "math"

// Commitment: whether the ranking commits to its top tools. A request
// that some tool serves tends to lift that tool, and its siblings, well
// above the rest of the catalog; a request that nothing serves matches
// each of many tools by a word or two of no consequence ("remove" in a
// workflow tool, "room" in a chat tool, for "remove the stain from the
// living room carpet"), so that the top scores are about as high as the
// ones below them. Query-performance prediction measures this without
// relevance judgements as the normalised query commitment (NQC; Shtok,
// Kurland, Carmel, Raiber and Markovits, "Predicting query performance
// by query-drift estimation", ACM TOIS 2012): the standard deviation of
// the top retrieval scores over their mean (the paper divides by the
// corpus's score; the mean of the top scores serves here, which keeps
// the measure free of the scale of BM25F scores, as relative scores
// are). Tools below the end of the ranking count at zero, so that one
// tool matching alone is as committed as can be.
//
// Commitment is scale-free but not catalog-free: it reads the top
// commitDepth scores, which in a catalog of a few dozen tools hold most
// of the catalog, mostly at zero, so there the check seldom applies; it
// is made for large catalogs, where a request matching only common
// words spreads over many tools. It is one half of the check: the
// router abstains when the top tool's coverage c is under
// commitCoverage and c·q² (q the commitment) is under
// RouterOptions.AbstainCommitment, so that a tool matching much of the
// request is never refused for its company, and a ranking that commits
// is never refused for a modest coverage.
//
// The depth, the form c·q² and the bound were picked on a grid over the
// shared routing benchmark; the figures are in docs/routing.md ("What each part of the ranking pays").
const (
	commitDepth    = 20
	commitCoverage = 0.4
)

// commitment returns the NQC of the top commitDepth raw scores of
// ranked (any order): their standard deviation over their mean, the
// missing ones counted as zero; 0 when no score is positive.
func commitment(ranked []Candidate) float64 {
	var top [commitDepth]float64 // descending; zero where the ranking ends
	for _, c := range ranked {
		x := c.raw
		if x <= top[commitDepth-1] {
			continue
		}
		i := commitDepth - 1
		for i > 0 && top[i-1] < x {
			top[i] = top[i-1]
			i--
		}
		top[i] = x
	}
	var sum float64
	for _, x := range top {
		sum += x
	}
	if sum <= 0 {
		return 0
	}
	mean := sum / commitDepth
	var ss float64
	for _, x := range top {
		ss += (x - mean) * (x - mean)
	}
	return math.Sqrt(ss/commitDepth) / mean
}

// uncommitted reports whether a ranking whose top tool covers coverage
// of the request neither covers much of it nor commits to its top (see
// above): the commitment check of abstention.
func uncommitted(ranked []Candidate, coverage, bound float64) bool {
	if coverage >= commitCoverage {
		return false
	}
	q := commitment(ranked)
	return coverage*q*q < bound
}
