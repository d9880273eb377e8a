package routing

import (
	"math/bits"

	"github.com/mcp-router/mcp-router/internal/editdist"
)

// Typos. A request word that the catalog does not know, directly or
// through a synonym, may be a misspelling of one it does ("recomend",
// "calender"). The index keeps its plain words by their first letter
// (a misspelling seldom starts wrong); such a request word is matched as
// the catalog word one edit away (two for long words), the most frequent
// of them on a tie. A word WordNet knows is not corrected: it is English,
// just not the catalog's.

// Typo correction bounds: words shorter than minTypoLen are not
// corrected (at that length one edit makes another word: cat, car), and
// words of at least twoEditLen letters may be two edits away.
const (
	minTypoLen = 5
	twoEditLen = 9
	// typoWeight is a corrected word's weight relative to the word itself.
	typoWeight = 0.8
)

// typoTable holds the catalog's plain words by their first letter.
type typoTable map[string][]typoWord

// typoWord is one catalog word and the set of letters in it, which
// rules most words out before their edit distance is computed: one edit
// changes at most two letters of the set.
type typoWord struct {
	id      int32
	letters uint32
}

// letterSet returns the set of the letters a to z in w, one bit each.
func letterSet(w string) uint32 {
	var m uint32
	for i := 0; i < len(w); i++ {
		m |= 1 << (w[i] - 'a')
	}
	return m
}

// buildTypos indexes the catalog's plain words for correct; refresh calls
// it under the write lock.
func (ix *Index) buildTypos() {
	t := make(typoTable, 512)
	for term, id := range ix.terms {
		if len(term) >= minTypoLen-1 && isASCIIAlpha(term) {
			t[term[:1]] = append(t[term[:1]], typoWord{id: id, letters: letterSet(term)})
		}
	}
	ix.typos = t
}

// correct returns the catalog word that the unknown request word term
// most likely misspells, or false; english tells whether the WordNet
// table holds term.
func (ix *Index) correct(term string, english bool) (int32, bool) {
	if len(term) < minTypoLen || !isASCIIAlpha(term) || english {
		return 0, false // an English word the catalog lacks is no typo
	}
	limit := 1
	if len(term) >= twoEditLen {
		limit = 2
	}
	best, bestDist, bestDF := int32(-1), limit+1, 0
	letters := letterSet(term)
	for _, tw := range ix.typos[term[:1]] {
		if bits.OnesCount32(tw.letters^letters) > 2*limit {
			continue
		}
		id := tw.id
		w := ix.termNames[id]
		if d := len(w) - len(term); d > limit || -d > limit {
			continue
		}
		dist := editdist.Distance(term, w, limit)
		// On equal distance the commoner word, then the first by
		// spelling: the table is built from a map, in no fixed order.
		df := len(ix.postings[id])
		if dist > limit {
			continue
		}
		if dist < bestDist || dist == bestDist && (df > bestDF || df == bestDF && w < ix.termNames[best]) {
			best, bestDist, bestDF = id, dist, df
		}
	}
	return best, best >= 0
}
