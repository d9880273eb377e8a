package routing

import (
	"math"
	"slices"
	"strings"
)

// posting is one document's entry in a term's posting list. tf is the
// term's BM25F pseudo-frequency in the document, Σ_f w_f·tf_f / (1 - b_f +
// b_f·len_f/avg_f), computed by refresh from the per-field frequencies
// kept beside the postings, so that scoring a posting reads eight bytes.
type posting struct {
	doc int32
	tf  float32
}

// corpusStats are the collection statistics BM25F needs, kept up to date
// as documents come and go.
type corpusStats struct {
	n     int                // live documents
	total [numFields]float64 // summed field lengths of live documents
}

func (s *corpusStats) add(lens [numFields]float32) {
	s.n++
	for f, l := range lens {
		s.total[f] += float64(l)
	}
}

func (s *corpusStats) remove(lens [numFields]float32) {
	s.n--
	for f, l := range lens {
		s.total[f] -= float64(l)
	}
}

// refresh recomputes every posting's pseudo-frequency from the current
// average field lengths: one pass over the documents for their per-field
// factors w_f / (1 - b_f + b_f·len_f/avg_f), one over the postings.
func (ix *Index) refresh() {
	w, b := ix.opts.Weights.array(), ix.opts.B.array()
	var avg [numFields]float64
	for f := range avg {
		if ix.stats.n > 0 {
			avg[f] = ix.stats.total[f] / float64(ix.stats.n)
		}
	}
	norms := make([][numFields]float32, len(ix.docs))
	for i := range ix.docs {
		if d := &ix.docs[i]; d.live {
			for f := range norms[i] {
				norms[i][f] = float32(w[f] / lengthNorm(b[f], float64(d.lens[f]), avg[f]))
			}
		}
	}
	for tid, ps := range ix.postings {
		tfs := ix.fieldTFs[tid]
		for i := range ps {
			n, tf := &norms[ps[i].doc], &tfs[i]
			ps[i].tf = float32(tf[0])*n[0] + float32(tf[1])*n[1] + float32(tf[2])*n[2] +
				float32(tf[3])*n[3] + float32(tf[4])*n[4]
		}
	}
	ix.orderByName()
	ix.buildInName()
	ix.stale = false
}

// orderByName numbers the live docs in name order, so that breaking a
// tie in score compares two integers rather than two names.
func (ix *Index) orderByName() {
	ids := make([]int32, 0, len(ix.byName))
	for _, id := range ix.byName {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(a, b int32) int { return strings.Compare(ix.docs[a].tool.Name, ix.docs[b].tool.Name) })
	ix.order = make([]int32, len(ix.docs))
	for i, id := range ids {
		ix.order[id] = int32(i)
	}
	ix.byOrder = ids
}

// lengthNorm is BM25's length normalisation 1 - b + b·len/avg.
func lengthNorm(b, length, avg float64) float64 {
	if avg == 0 {
		return 1
	}
	return 1 - b + b*length/avg
}

// idf is BM25's inverse document frequency in the always-positive form
// ln(1 + (N - df + 0.5) / (df + 0.5)).
func idf(n, df int) float64 {
	return math.Log(1 + (float64(n-df)+0.5)/(float64(df)+0.5))
}
