package routing

// maxSegments bounds how many clauses of one request are told apart; the
// clauses past it join the last one.
const maxSegments = 8

// termKind tells how a query term came about.
type termKind uint8

const (
	termWord    termKind = iota // a word of the request
	termBigram                  // two adjacent words of the request
	termSynonym                 // a lexicon synonym of a word of the request
)

// queryTerm is one distinct term of an analysed query.
type queryTerm struct {
	term   string
	weight float64 // 1 for words, BigramWeight or SynonymWeight for the others
	kind   termKind
	segs   uint8 // bit s is set when the term occurs in segment s
	of     int   // for a synonym, the index of its word
}

// query is an analysed request.
type query struct {
	terms []queryTerm
	nseg  int // clauses told apart; 1 when the request is one clause
}

// parseQuery analyses a request. Each clause (see segments) is split into
// terms as documents are, filler words dropped. Adjacent words also make
// a bigram term at BigramWeight, and each word's lexicon synonyms are
// added at SynonymWeight. Repeats are merged: a word repeated in a request
// is emphasis at most, and counting it twice lets one word outweigh the
// rest.
func (ix *Index) parseQuery(q string) query {
	clauses := segments(q, maxSegments)
	var out query
	out.nseg = max(1, len(clauses))
	seen := make(map[string]int, 16)
	put := func(term string, w float64, kind termKind, segs uint8, of int) {
		if i, ok := seen[term]; ok {
			t := &out.terms[i]
			if w > t.weight {
				t.weight, t.kind = w, kind
			}
			t.segs |= segs
			return
		}
		seen[term] = len(out.terms)
		out.terms = append(out.terms, queryTerm{term: term, weight: w, kind: kind, segs: segs, of: of})
	}
	bw := ix.opts.BigramWeight
	for s, clause := range clauses {
		bit := uint8(1) << s
		prev := ""
		ix.qTok.each(clause, func(term string, kind wordKind) {
			put(term, 1, termWord, bit, -1)
			if bw <= 0 || kind == wordJoined {
				return
			}
			if prev != "" {
				put(prev+" "+term, bw, termBigram, bit, -1)
			}
			prev = term
		})
	}
	if sw := ix.opts.SynonymWeight; sw > 0 {
		for i, qt := range out.terms[:len(out.terms):len(out.terms)] {
			if qt.kind != termWord {
				continue
			}
			for _, syn := range synonymsOf(qt.term) {
				put(syn, sw, termSynonym, qt.segs, i)
			}
		}
	}
	return out
}
