package routing

import (
	"cmp"
	"math"
	"slices"
	"strings"
)

// Associations learned from the catalog. Words that keep company in the
// catalog's tools (in one tool's name, description, parameter names and
// descriptions, or its upstream's name) are related in the catalog's own
// usage: "merge" and "pull", "issue" and "label", "forecast" and
// "weather". At refresh the index learns, for each word, the few words
// that co-occur with it most, by normalised pointwise mutual information
// over the tools:
//
//	npmi(a, b) = ln(p(a,b) / (p(a)·p(b))) / -ln p(a,b)
//
// (1 when a and b always occur together, 0 when independently), with
// p the share of tools holding the word(s). A pair counts only when at
// least assocMinSupport tools hold both, and only words in at most
// assocMaxShare of the tools take part (a word on every tool of a large
// server associates with everything there, and says nothing).
//
// When AssociationWeight is set, a request word the catalog knows then
// also matches, at that weight, the tools that hold its associates but
// not the word itself: a request saying "merge request" reaches a tool whose text
// says "pull request" where the catalog's tools use both. The associates
// of one word are one BM25F term at the word's IDF (as a word's synonyms
// are), and what they add orders the ranking without counting in a
// tool's coverage of the request (all of it goes to the loss, see
// calibrate.go): an association is a hint of the catalog's usage, not a
// match of the request.
//
// It is off by default. Measured on the shared routing benchmark (bfcl,
// seal_tools, metatool, etom by level) at weights 0.08 to 0.4 and NPMI
// floors 0.3 to 0.6, it moved R@5 by at most half a point either way
// (etom level 3 +0.002, metatool +0.001, seal_tools -0.001), and when
// it also lifted the tools holding the word itself, it lost one to three
// points on every set: the words a catalog's tools share are mostly the
// words of one server, which the server lift (server.go) already reads.
// Co-occurrence within upstreams (each server's tools as one unit), in
// place of the tools' or beside them, did no better (bfcl -0.002, etom
// level 3 -0.001 to 0).

// Association bounds: assocTop associates at most are kept per word, each
// with an NPMI of at least assocMinNPMI, from at least assocMinSupport
// tools holding both words; words in more than assocMaxShare of the tools
// (and at least assocMaxDF) take no part. The table is at most assocTop
// entries per distinct word of the catalog.
const (
	assocTop        = 3
	assocMinSupport = 2
	assocMinNPMI    = 0.5
	assocMaxShare   = 0.05
	assocMaxDF      = 8
)

// association is one associate of a word: its term id and its weight
// relative to the word, AssociationWeight times the pair's NPMI.
type association struct {
	tid    int32
	weight float32
}

// buildAssociations learns the catalog's word associations (see above)
// into ix.assoc, by term id. Its cost is the sum over the tools of the
// square of their distinct eligible words, a few milliseconds for
// thousands of tools; refresh calls it under the write lock.
func (ix *Index) buildAssociations() {
	ix.assoc = ix.assoc[:0]
	w := ix.opts.AssociationWeight
	n := ix.stats.n
	if w <= 0 || n == 0 {
		return
	}
	maxDF := max(assocMaxDF, int(assocMaxShare*float64(n)))
	eligible := make([]bool, len(ix.postings))
	any := false
	for tid, ps := range ix.postings {
		if df := len(ps); df >= assocMinSupport && df <= maxDF && !strings.Contains(ix.termNames[tid], " ") {
			eligible[tid] = true
			any = true
		}
	}
	if !any {
		return
	}
	// Each live document's eligible words, flattened.
	start := make([]int32, len(ix.docs)+1)
	var words []int32
	for i := range ix.docs {
		start[i] = int32(len(words))
		if d := &ix.docs[i]; d.live {
			for _, tid := range d.terms {
				if eligible[tid] {
					words = append(words, tid)
				}
			}
		}
	}
	start[len(ix.docs)] = int32(len(words))

	if cap(ix.assoc) < len(ix.postings) {
		ix.assoc = make([][]association, len(ix.postings))
	}
	ix.assoc = ix.assoc[:len(ix.postings)]
	clear(ix.assoc)
	count := make([]int32, len(ix.postings))
	var touched []int32
	var best []scoredAssoc
	fn := float64(n)
	for a, ok := range eligible {
		if !ok {
			continue
		}
		touched = touched[:0]
		for _, p := range ix.postings[a] {
			for _, b := range words[start[p.doc]:start[p.doc+1]] {
				if b == int32(a) {
					continue
				}
				if count[b] == 0 {
					touched = append(touched, b)
				}
				count[b]++
			}
		}
		best = best[:0]
		dfa := float64(len(ix.postings[a]))
		for _, b := range touched {
			c := count[b]
			count[b] = 0
			if c < assocMinSupport {
				continue
			}
			pab := float64(c) / fn
			npmi := math.Log(pab*fn*fn/(dfa*float64(len(ix.postings[b])))) / -math.Log(pab)
			if npmi >= assocMinNPMI {
				best = append(best, scoredAssoc{tid: b, npmi: npmi})
			}
		}
		if len(best) == 0 {
			continue
		}
		// The strongest first; on a tie the first by spelling, since
		// term ids follow the order tools were added in.
		slices.SortFunc(best, func(x, y scoredAssoc) int {
			if c := cmp.Compare(y.npmi, x.npmi); c != 0 {
				return c
			}
			return strings.Compare(ix.termNames[x.tid], ix.termNames[y.tid])
		})
		kept := make([]association, 0, min(len(best), assocTop))
		for _, s := range best[:min(len(best), assocTop)] {
			kept = append(kept, association{tid: s.tid, weight: float32(w * s.npmi)})
		}
		ix.assoc[a] = kept
	}
}

// scoredAssoc is a candidate associate while the table is built.
type scoredAssoc struct {
	tid  int32
	npmi float64
}

// associatesOf returns the associates of term id tid.
func (ix *Index) associatesOf(tid int32) []association {
	if int(tid) >= len(ix.assoc) {
		return nil
	}
	return ix.assoc[tid]
}

// associationSignal scores each request word's associates as one BM25F
// term at the word's IDF, all of it loss (see above).
type associationSignal struct{}

func (associationSignal) score(ix *Index, acc *accumulator, rq *resolvedQuery) {
	k1 := float32(ix.opts.K1)
	for gi := range rq.assoc {
		g := &rq.assoc[gi]
		grouped := acc.gather(g.members)
		// The tools holding the word itself have their match already.
		for _, p := range rq.groups[g.of].members[0].postings {
			acc.gtf[p.doc] = 0
		}
		for _, d := range grouped {
			tf := acc.gtf[d]
			if tf == 0 {
				continue
			}
			acc.gtf[d] = 0
			c := g.idf * tf / (k1 + tf)
			acc.add(d, c, g.segs, rq.nseg)
			acc.lose(d, c, g.segs, rq.nseg)
		}
	}
}
