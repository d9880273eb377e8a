package routing

import "math"

// Commitment: whether the ranking commits to its top tools. A request some
// tool serves lifts that tool well above the rest; one nothing serves
// matches many tools by a word or two, so the top scores are about equal.
// This is the normalised query commitment (NQC; Shtok et al., ACM TOIS
// 2012): the standard deviation of the top scores over their mean (the
// paper divides by the corpus's score), tools past the ranking's end
// counting as zero. The router abstains when the top tool's coverage c is
// under commitCoverage and c·q² is under RouterOptions.AbstainCommitment.
// Depth, form and bound were picked on a grid (docs/routing.md).
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
