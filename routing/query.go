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
	value  bool  // a word only in argument values: unknown, not held against coverage
	// derived: the word as another part of speech (remember, memory),
	// matched as the word itself (see lookUpGroup).
	derived  bool
	fallback bool        // looked up only when the catalog lacks the word
	ex       *expansions // a word's expansions as the tokenizer kept them, or nil
	surface  string      // a word as the request wrote it, for alerts
}

// derivedWeight is the weight of a word's derived form (remember, memory).
const derivedWeight = 0.3

// query is an analysed request.
type query struct {
	terms []queryTerm
	nseg  int // clauses told apart; 1 when the request is one clause
}

// queryScratch is parseQuery's and resolve's scratch space, reused
// through a sync.Pool.
type queryScratch struct {
	terms   []queryTerm
	seen    map[string]int
	vals    map[string]bool
	bigram  []byte
	words   []queryTerm // the terms before synonyms, as parsed
	synOf   []int       // word i's synonyms: synOf[synSpan[i][0]:synSpan[i][1]]
	synSpan [][2]int32
	groups  []termGroup // resolve's
	members []resolvedTerm
	unknown []string
}

func (ix *Index) acquireQuery() *queryScratch {
	sc, _ := ix.queries.Get().(*queryScratch)
	if sc == nil {
		sc = &queryScratch{seen: make(map[string]int, 64), vals: map[string]bool{}}
	}
	return sc
}

// maxPooledMembers bounds the resolved terms a pooled query scratch
// keeps room for (a request of a few hundred words).
const maxPooledMembers = 1024

func (ix *Index) releaseQuery(sc *queryScratch) {
	clear(sc.seen)
	clear(sc.vals)
	clear(sc.terms) // drop the strings
	clear(sc.words)
	sc.terms = sc.terms[:0]
	// Drop the posting lists (a change of the index may replace them).
	clear(sc.groups)
	clear(sc.members)
	sc.groups, sc.members = sc.groups[:0], sc.members[:0]
	if cap(sc.members) > maxPooledMembers {
		sc.groups, sc.members = nil, nil
	}
	ix.queries.Put(sc)
}

// parseQuery analyses a request: each clause (see segments) is split into
// terms, filler words dropped; adjacent words make a bigram at
// BigramWeight when the index holds it, and each word's expansions are
// added (see expand). Repeats are merged, so that one repeated word does
// not outweigh the rest. The caller holds the read lock.
func (ix *Index) parseQuery(q string, sc *queryScratch) query {
	p := prepare(q, ix.opts.Off)
	clauses := segments(p.text, maxSegments)
	ts := termSet{terms: sc.terms[:0], seen: sc.seen, vals: sc.vals}
	for _, v := range p.values {
		ix.qTok.each(v, func(term string, _ wordKind) { ts.vals[term] = false })
	}
	for _, v := range p.stated {
		ix.qTok.each(v, func(term string, _ wordKind) { ts.vals[term] = true })
	}
	// bigram returns the index's own string for the bigram, if any.
	bigram := func(prev, term string) (string, bool) {
		sc.bigram = append(append(append(sc.bigram[:0], prev...), ' '), term...)
		tid, ok := ix.terms[string(sc.bigram)]
		if !ok {
			return "", false
		}
		return ix.termNames[tid], true
	}
	bw := ix.opts.BigramWeight
	for s, clause := range clauses {
		bit := uint8(1) << s
		prev := ""
		ix.qTok.eachWord(clause, func(term string, kind wordKind, ex *expansions, word string) {
			said, val := ts.vals[term]
			if said {
				return // what the request says to keep is not what it asks
			}
			t := ts.put(term, 1, termWord, bit, -1)
			t.value = val
			if t.ex == nil {
				t.ex = ex
			}
			if t.surface == "" {
				t.surface = word
			}
			if bw <= 0 || kind == wordJoined {
				return
			}
			if prev != "" {
				if b, ok := bigram(prev, term); ok {
					ts.put(b, bw, termBigram, bit, -1)
				}
			}
			prev = term
		})
	}
	if ix.opts.SynonymWeight > 0 {
		sc.words = append(sc.words[:0], ts.terms...)
		ix.expand(&ts, sc.words)
	}
	sc.terms = ts.terms
	return query{terms: ts.terms, nseg: max(1, len(clauses))}
}

// termSet gathers a query's distinct terms.
type termSet struct {
	terms []queryTerm
	seen  map[string]int  // term -> its index in terms
	vals  map[string]bool // terms that are argument values; true: stated (prepared)
}

// put adds a term, or merges it into the same term already there: the
// higher weight wins and the clauses add up.
func (ts *termSet) put(term string, w float64, kind termKind, segs uint8, of int) *queryTerm {
	if i, ok := ts.seen[term]; ok {
		t := &ts.terms[i]
		if w > t.weight {
			t.weight, t.kind = w, kind
		}
		t.segs |= segs
		return t
	}
	ts.seen[term] = len(ts.terms)
	ts.terms = append(ts.terms, queryTerm{term: term, weight: w, kind: kind, segs: segs, of: of})
	return &ts.terms[len(ts.terms)-1]
}

// expand adds to ts each word's lexicon synonyms at SynonymWeight, and
// its derived forms and translations (fallbacks, see lookUpGroup), in
// the word's clauses.
func (ix *Index) expand(ts *termSet, words []queryTerm) {
	sw := ix.opts.SynonymWeight
	for i, qt := range words {
		if qt.kind != termWord {
			continue
		}
		ex := qt.ex
		if ex == nil {
			e := expansionsOf(qt.term)
			ex = &e
		}
		for _, syn := range ex.synonyms {
			ts.put(syn, sw, termSynonym, qt.segs, i)
		}
		var derived, trans []string
		if ix.opts.Off&OffDerived == 0 {
			derived = ex.rel.derived
		}
		if ix.opts.Off&OffTranslations == 0 {
			trans = ex.trans
		}
		for _, d := range derived {
			if j, ok := ts.seen[d]; ok {
				// A synonym that is also a derived form counts as the word.
				if t := &ts.terms[j]; t.kind == termSynonym && t.of == i {
					t.derived = true
				}
				continue
			}
			t := ts.put(d, derivedWeight, termSynonym, qt.segs, i)
			t.derived, t.fallback = true, true
		}
		for _, tr := range trans {
			if _, ok := ts.seen[tr]; !ok {
				t := ts.put(tr, translationWeight, termSynonym, qt.segs, i)
				t.derived, t.fallback = true, true
			}
		}
	}
}
