package builtin

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"unicode"
)

// BM25 parameters: k1 is how fast repeated terms saturate, b how much passage length matters.
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// stopWords are common English words that carry no meaning for ranking.
var stopWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`a about after all also am an and any are as at be been before being
		but by can could did do does doing for from had has have having he her here him his how i if in
		into is it its just me my no nor not of off on once only or other our out over own same she
		should so some such than that the their them then there these they this those through to too
		under until up very was we were what when where which while who whom why will with would you
		your s t d ll m re ve`) {
		stopWords[w] = true
	}
}

// tokenize lower-cases s and splits it into words of letters and digits, without stop words.
func tokenize(s string) []string {
	words := strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	return slices.DeleteFunc(words, func(w string) bool { return stopWords[w] })
}

type posting struct {
	doc int32
	tf  int32
}

// bm25Index ranks passages for a query with Okapi BM25. It is immutable once built.
type bm25Index struct {
	passages []passage
	files    int // documents the passages came from
	lengths  []int32
	avgLen   float64
	postings map[string][]posting
}

// newBM25Index indexes each passage's heading path and text.
func newBM25Index(passages []passage, files int) *bm25Index {
	ix := &bm25Index{passages: passages, files: files, lengths: make([]int32, len(passages)), postings: map[string][]posting{}}
	total := 0
	for i, p := range passages {
		tokens := tokenize(p.heading + "\n" + p.text)
		counts := map[string]int32{}
		for _, t := range tokens {
			counts[t]++
		}
		for t, n := range counts {
			ix.postings[t] = append(ix.postings[t], posting{doc: int32(i), tf: n})
		}
		ix.lengths[i] = int32(len(tokens))
		total += len(tokens)
	}
	if len(passages) > 0 {
		ix.avgLen = float64(total) / float64(len(passages))
	}
	return ix
}

type hit struct {
	passage *passage
	score   float64
}

// search returns up to limit passages that share a word with query, best first; ties go to the
// earlier path, then the earlier passage in the file.
func (ix *bm25Index) search(query string, limit int) []hit {
	terms := slices.Compact(slices.Sorted(slices.Values(tokenize(query))))
	scores := map[int32]float64{}
	n := float64(len(ix.passages))
	for _, t := range terms {
		list := ix.postings[t]
		df := float64(len(list))
		idf := math.Log(1 + (n-df+0.5)/(df+0.5))
		for _, p := range list {
			tf := float64(p.tf)
			norm := bm25K1 * (1 - bm25B + bm25B*float64(ix.lengths[p.doc])/ix.avgLen)
			scores[p.doc] += idf * tf * (bm25K1 + 1) / (tf + norm)
		}
	}
	hits := make([]hit, 0, len(scores))
	for doc, s := range scores {
		hits = append(hits, hit{passage: &ix.passages[doc], score: s})
	}
	slices.SortFunc(hits, func(a, b hit) int {
		return cmp.Or(cmp.Compare(b.score, a.score), strings.Compare(a.passage.path, b.passage.path),
			cmp.Compare(a.passage.line, b.passage.line))
	})
	return hits[:min(limit, len(hits))]
}
