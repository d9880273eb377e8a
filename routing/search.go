package routing

import (
	"math"
	"math/bits"
	"slices"
)

// accumulator is Search's scratch space, sized to the catalog and reused
// through a sync.Pool, so that a search allocates nothing catalog-sized.
// Slices "by doc id" are indexed by a document's id.
type accumulator struct {
	score      []float32              // whole-request score by doc id; 0 = untouched
	seg        [maxSegments][]float32 // per-clause scores by doc id
	segTouched [maxSegments][]int32   // per clause, the doc ids it scored
	nseg       int                    // clauses in use
	touched    []int32                // doc ids with a non-zero score
	matched    []uint64               // by doc id, the request's first 64 words it matches
	gtf        []float32              // a term group's pseudo-frequency by doc id
	full       []float32              // gtf with stand-ins at full weight (see standIn)
	grouped    []int32                // doc ids with a non-zero gtf
	heap       []scored               // selectTop's result
	keys       []uint64               // selectTop's rank keys (see rankKey)
	cands      []candidate            // diversify's candidates
	picked     []bool                 // by doc id, what diversify took; it unmarks them before returning
	whole      []scored               // the whole request's top, for diversify
	loss       []float32              // by doc id, the score coverage does not count (see synonymLoss)
	segLoss    [maxSegments][]float32 // loss per clause
	lossy      []int32                // doc ids with a non-zero loss
}

func (ix *Index) acquire(n, nseg int) *accumulator {
	acc, _ := ix.accs.Get().(*accumulator)
	if acc == nil {
		acc = &accumulator{}
	}
	acc.score = grow(acc.score, n)
	acc.gtf = grow(acc.gtf, n)
	acc.full = grow(acc.full, n)
	acc.loss = grow(acc.loss, n)
	acc.matched = grow(acc.matched, n)
	acc.nseg = nseg
	if nseg > 1 {
		for s := range nseg {
			acc.seg[s] = grow(acc.seg[s], n)
			acc.segLoss[s] = grow(acc.segLoss[s], n)
		}
	}
	return acc
}

// grow returns xs resized to n, with room to spare so that a growing
// catalog does not reallocate on every search; every element is zero, as
// searches leave them (see release).
func grow[T float32 | uint64 | bool](xs []T, n int) []T {
	if cap(xs) < n {
		return make([]T, n, n+n/4)
	}
	return xs[:n]
}

func (ix *Index) release(acc *accumulator) {
	zero(acc.score, acc.touched)
	zero(acc.matched, acc.touched)
	zero(acc.loss, acc.lossy)
	if acc.nseg > 1 {
		// A clause's losses are on docs it scored (see add and lose).
		for s := range acc.nseg {
			zero(acc.seg[s], acc.segTouched[s])
			zero(acc.segLoss[s], acc.segTouched[s])
			acc.segTouched[s] = acc.segTouched[s][:0]
		}
	}
	acc.lossy, acc.touched = acc.lossy[:0], acc.touched[:0]
	ix.accs.Put(acc)
}

// zero sets xs[d] to 0 for each d in ids, the only non-zero places; when
// ids are more than a sixteenth of xs, clearing it all is cheaper.
func zero[T float32 | uint64](xs []T, ids []int32) {
	if len(ids) > len(xs)/16 {
		clear(xs)
		return
	}
	for _, d := range ids {
		xs[d] = 0
	}
}

// resolvedTerm is a query term found in the index.
type resolvedTerm struct {
	postings []posting
	tid      int32   // the term's id
	alt      float32 // the term's weight within its group
	exact    bool    // the request's own word or bigram, not a synonym
	standIn  bool    // a synonym of a word the catalog lacks, ranked at full weight (see lookUpGroup)
}

// termGroup is a word of the request and its lexicon synonyms (or a
// bigram), scored as one BM25F term: the frequencies of the members add
// up, each scaled by its weight, before saturation, so that a tool with
// both a word and its synonym gains no more than a tool with the word
// twice, and a synonym counts at the word's IDF.
type termGroup struct {
	members []resolvedTerm
	idf     float32
	segs    uint8  // the clauses the word occurs in
	word    bool   // a word of the request, not a bigram or an argument value
	standIn bool   // some member is a stand-in (resolvedTerm.standIn)
	surface string // for a word, as the request wrote it (queryTerm.surface)
}

// resolvedQuery is a query looked up in the index.
type resolvedQuery struct {
	groups  []termGroup
	nseg    int
	best    float64              // the best score a tool could reach for the whole request
	segBest [maxSegments]float64 // the same for each clause
	// reach and segReach are best and segBest with the words the catalog
	// does not know added (see calibrate.go).
	reach    float64
	segReach [maxSegments]float64
	foreign  int // English nouns the catalog does not know (see advice.go)
	// unknown holds the words the catalog does not know (argument values
	// aside), as written, for alerts; nouns first.
	unknown      []string
	unknownNouns int
}

// Search ranks the catalog for query, best first, ties by name; k <= 0
// means every tool with a non-zero score. A request of several clauses
// is ranked so that every clause's best tools reach the top (see
// diversify.go).
func (ix *Index) Search(query string, k int) []Hit {
	return ix.search(nil, query, k, nil)
}

// search is Search into dst's storage that also appends each hit's
// evidence to ev, when not nil, for fitting the calibration.
func (ix *Index) search(dst []Hit, query string, k int, ev *[]evidence) []Hit {
	ix.rlockFresh()
	defer ix.mu.RUnlock()
	sc := ix.acquireQuery()
	defer ix.releaseQuery(sc)
	q := ix.parseQuery(query, sc)
	if len(q.terms) == 0 {
		return nil
	}
	rq := ix.resolve(q, sc, sc.groups[:0], sc.members[:0], sc.unknown[:0])
	sc.groups, sc.unknown = rq.groups, rq.unknown
	if len(rq.groups) == 0 || rq.best == 0 {
		return nil
	}
	acc := ix.acquire(len(ix.docs), rq.nseg)
	defer ix.release(acc)
	ix.accumulate(acc, &rq)
	var hits []Hit
	if rq.nseg > 1 && ix.opts.Diversity > 0 {
		hits = ix.diversify(dst[:0], acc, &rq, k, ev)
	} else {
		top := selectTop(acc, acc.touched, acc.score, k, ix.order, ix.byOrder)
		hits = slices.Grow(dst[:0], len(top))
		for _, c := range top {
			e := evidence{coverage: clauseCoverage(c.score-acc.loss[c.doc], rq.reach), relative: ratio(c.score, top[0].score)}
			hits = append(hits, ix.hit(c.doc, c.score, e, ev))
		}
		hits = monotone(hits)
	}
	ix.countWords(acc, hits[:min(len(hits), wordsCounted)], &rq)
	return hits
}

// wordsCounted is how many of the top hits countWords looks at.
const wordsCounted = 3

// countWords sets each hit's Words (the request's words the catalog
// knows, values aside), Matched (how many of them the tool matches) and
// Foreign (its English nouns the catalog does not know).
func (ix *Index) countWords(acc *accumulator, hits []Hit, rq *resolvedQuery) {
	var ids [wordsCounted]int32
	for i := range hits {
		ids[i] = -1
		if id, ok := ix.byName[hits[i].Name]; ok {
			ids[i] = id
			hits[i].Matched = bits.OnesCount64(acc.matched[id])
		}
	}
	words := 0
	for gi := range rq.groups {
		g := &rq.groups[gi]
		if !g.word {
			continue
		}
		if words++; words <= 64 {
			continue
		}
		for i := range hits {
			if ids[i] >= 0 && g.has(ids[i]) {
				hits[i].Matched++
			}
		}
	}
	// One copy for all hits: the known words, then the unknown.
	var req *RequestWords
	if len(hits) > 0 {
		named := make([]string, 0, min(words, maxNamedWords)+len(rq.unknown))
		for gi := range rq.groups {
			if g := &rq.groups[gi]; g.word && len(named) < maxNamedWords {
				named = append(named, g.surface)
			}
		}
		nk := len(named)
		named = append(named, rq.unknown...)
		req = &RequestWords{Clauses: rq.nseg, Known: named[:nk:nk], Unknown: named[nk:]}
	}
	for i := range hits {
		hits[i].Words, hits[i].Foreign, hits[i].Request = words, rq.foreign, req
		if ids[i] >= 0 {
			hits[i].Matches = acc.matched[ids[i]] & (1<<len(req.Known) - 1)
		}
	}
}

// maxNamedWords bounds RequestWords' Known and Unknown each.
const maxNamedWords = 16

// has reports whether doc is in any of the group's posting lists.
func (g *termGroup) has(doc int32) bool {
	for _, m := range g.members {
		for _, p := range m.postings {
			if p.doc == doc && p.tf > 0 {
				return true
			}
		}
	}
	return false
}

// rlockFresh read-locks the index, refreshing stale frequencies first.
func (ix *Index) rlockFresh() {
	for {
		ix.mu.RLock()
		if !ix.stale {
			return
		}
		ix.mu.RUnlock()
		ix.mu.Lock()
		if ix.stale {
			ix.refresh()
		}
		ix.mu.Unlock()
	}
}

// resolve looks the query terms up, groups each word with its synonyms,
// weighs each group by the IDF of its word (else of its rarest synonym),
// and sums the best score a tool could reach for the whole request and
// each clause. Words the catalog does not know count only in the reach
// (see calibrate.go).
func (ix *Index) resolve(q query, sc *queryScratch, groups []termGroup, members []resolvedTerm, unknown []string) resolvedQuery {
	rq := resolvedQuery{nseg: q.nseg, unknown: unknown}
	ceiling := ix.termCeiling()
	syns := sc.synonyms(q.terms)
	for i, qt := range q.terms {
		if qt.kind == termSynonym {
			continue
		}
		start := len(members)
		var df int
		members, df = ix.lookUpGroup(q.terms, i, syns(i), members)
		var rel wordRelations // an unknown word's, looked up once
		if len(members) == start && qt.kind == termWord && !qt.value {
			rel = qt.relations()
		}
		if len(members) == start {
			if qt.kind == termWord && !qt.value {
				rq.addReach(idf(ix.stats.n, 0)*ceiling*calibUnknown, qt.segs)
				noun := foreignNoun(qt.term, rel)
				if noun {
					rq.foreign++
				}
				if len(rq.unknown) < maxNamedWords {
					// Nouns and names (gitlab) first: they name what is asked for.
					at := len(rq.unknown)
					if noun || !rel.english {
						at = rq.unknownNouns
						rq.unknownNouns++
					}
					rq.unknown = slices.Insert(rq.unknown, at, qt.surface)
				}
			}
			continue
		}
		w := idf(ix.stats.n, df) * qt.weight
		if qt.kind == termWord {
			w *= ix.wordWeight(&qt, &members[start])
		}
		ms := members[start:len(members):len(members)]
		groups = append(groups, termGroup{members: ms, idf: float32(w), segs: qt.segs, word: qt.kind == termWord && !qt.value,
			standIn: slices.ContainsFunc(ms, func(m resolvedTerm) bool { return m.standIn }), surface: qt.surface})
		if qt.kind != termWord {
			continue
		}
		rq.best += w * ceiling
		for m := qt.segs; m != 0; m &= m - 1 {
			rq.segBest[bits.TrailingZeros8(m)] += w * ceiling
		}
		rq.addReach(w*ceiling, qt.segs)
	}
	rq.groups = groups
	sc.members = members
	return rq
}

// synonyms indexes each word's synonyms in terms in one pass (not
// quadratic in the request's length) and returns a function giving a
// word's, in order.
func (sc *queryScratch) synonyms(terms []queryTerm) func(i int) []int {
	sc.synSpan = append(sc.synSpan[:0], make([][2]int32, len(terms))...)
	sc.synOf = sc.synOf[:0]
	// Counting sort by word: first each word's count, then its offset.
	for _, qt := range terms {
		if qt.kind == termSynonym {
			sc.synSpan[qt.of][1]++
		}
	}
	n := int32(0)
	for i := range sc.synSpan {
		c := sc.synSpan[i][1]
		sc.synSpan[i] = [2]int32{n, n}
		n += c
	}
	sc.synOf = append(sc.synOf, make([]int, n)...)
	for j, qt := range terms {
		if qt.kind == termSynonym {
			sp := &sc.synSpan[qt.of]
			sc.synOf[sp[1]] = j
			sp[1]++
		}
	}
	return func(i int) []int { return sc.synOf[sc.synSpan[i][0]:sc.synSpan[i][1]] }
}

// addReach adds x to the reach of the whole request and of the clauses
// in segs.
func (rq *resolvedQuery) addReach(x float64, segs uint8) {
	rq.reach += x
	for m := segs; m != 0; m &= m - 1 {
		rq.segReach[bits.TrailingZeros8(m)] += x
	}
}

// lookUpGroup appends to members the posting lists of terms[i] and of its
// synonyms that the index holds, and returns the document frequency that
// weighs the group: the word's, else its rarest synonym's.
func (ix *Index) lookUpGroup(terms []queryTerm, i int, syns []int, members []resolvedTerm) ([]resolvedTerm, int) {
	df := -1
	start := len(members)
	if tid, ok := ix.terms[terms[i].term]; ok {
		members = append(members, resolvedTerm{postings: ix.postings[tid], tid: tid, alt: 1, exact: true})
		df = len(ix.postings[tid])
	}
	word := df >= 0
	for _, j := range syns {
		syn := terms[j]
		if word && syn.fallback {
			continue
		}
		if tid, ok := ix.terms[syn.term]; ok {
			// A synonym is discounted below the word itself; when no tool
			// has the word, it ranks as the word would (a stand-in), but
			// coverage still counts it as a synonym. Derived forms keep
			// their discount.
			members = append(members, resolvedTerm{postings: ix.postings[tid], tid: tid, alt: float32(syn.weight),
				exact: syn.derived && len(members) == start, standIn: !word && !syn.fallback})
			if !word && (df < 0 || len(ix.postings[tid]) < df) {
				df = len(ix.postings[tid])
			}
		}
	}
	return members, df
}

// accumulate adds every group's BM25F contribution to the scores of the
// request and its clauses, and what coverage does not count to the losses.
func (ix *Index) accumulate(acc *accumulator, rq *resolvedQuery) {
	k1 := float32(ix.opts.K1)
	words := 0
	for gi := range rq.groups {
		g := &rq.groups[gi]
		var bit uint64 // the word's bit in acc.matched; 0 for the others
		if g.word {
			if words < 64 {
				bit = 1 << words
			}
			words++
		}
		if m := &g.members[0]; len(g.members) == 1 && m.alt == 1 && m.exact && (rq.nseg == 1 || bits.OnesCount8(g.segs) == 1) {
			acc.addList(m.postings, g.idf, k1, bit, g.segs, rq.nseg)
			continue
		}
		if m := &g.members[0]; len(g.members) == 1 && m.alt == 1 {
			for _, p := range m.postings {
				if p.tf > 0 {
					c := g.idf * p.tf / (k1 + p.tf)
					acc.add(p.doc, c, g.segs, rq.nseg)
					acc.matched[p.doc] |= bit
					if !m.exact {
						acc.lose(p.doc, synonymLoss(c, 0), g.segs, rq.nseg)
					}
				}
			}
			continue
		}
		grouped := acc.gather(g.members)
		if g.standIn {
			acc.gatherFull(g.members)
		}
		// A stand-in group ranks by its full-weight frequency; what that
		// adds over the group's own contribution is lost to coverage.
		extra := func(d int32, c float32) float32 {
			if !g.standIn {
				return 0
			}
			tf := acc.full[d]
			acc.full[d] = 0
			return g.idf*tf/(k1+tf) - c
		}
		// The word itself, when the catalog has it, comes first: its docs
		// lose what the synonyms add, the others all they give.
		if w := &g.members[0]; w.exact {
			for _, p := range w.postings {
				if p.tf == 0 {
					continue
				}
				tf := acc.gtf[p.doc]
				acc.gtf[p.doc] = 0
				c := g.idf * tf / (k1 + tf)
				x := extra(p.doc, c)
				acc.add(p.doc, c+x, g.segs, rq.nseg)
				acc.matched[p.doc] |= bit
				if tf > p.tf {
					x += synonymLoss(c, g.idf*p.tf/(k1+p.tf))
				}
				if x > 0 {
					acc.lose(p.doc, x, g.segs, rq.nseg)
				}
			}
		}
		for _, d := range grouped {
			tf := acc.gtf[d]
			if tf == 0 {
				continue
			}
			acc.gtf[d] = 0
			c := g.idf * tf / (k1 + tf)
			x := extra(d, c)
			acc.add(d, c+x, g.segs, rq.nseg)
			acc.matched[d] |= bit
			acc.lose(d, synonymLoss(c, 0)+x, g.segs, rq.nseg)
		}
	}
}

// addList is accumulate's loop for the commonest group, one exact term
// at full weight in one clause: add and the matched bit, with the slices
// it writes held in locals rather than read back from acc at every
// posting. The sums are add's, in its order: the scores are the same to
// the bit.
func (acc *accumulator) addList(ps []posting, idf, k1 float32, bit uint64, segs uint8, nseg int) {
	score, matched, touched := acc.score, acc.matched, acc.touched
	var seg []float32
	var segTouched []int32
	s := bits.TrailingZeros8(segs)
	if nseg > 1 {
		seg, segTouched = acc.seg[s], acc.segTouched[s]
	}
	for _, p := range ps {
		if !(p.tf > 0) {
			continue
		}
		c := idf * p.tf / (k1 + p.tf)
		d := p.doc
		if score[d] == 0 {
			touched = append(touched, d)
		}
		score[d] += c
		matched[d] |= bit
		if seg != nil {
			if seg[d] == 0 {
				segTouched = append(segTouched, d)
			}
			seg[d] += c
		}
	}
	acc.touched = touched
	if nseg > 1 {
		acc.segTouched[s] = segTouched
	}
}

// gatherFull adds the term frequencies of a stand-in group's members
// into acc.full as gather does into acc.gtf, its stand-ins at weight 1.
func (acc *accumulator) gatherFull(members []resolvedTerm) {
	for _, m := range members {
		w := m.alt
		if m.standIn {
			w = 1
		}
		for _, p := range m.postings {
			if p.tf > 0 {
				acc.full[p.doc] += w * p.tf
			}
		}
	}
}

// gather adds the members' term frequencies, weighted by alt, into
// acc.gtf and returns the docs it made non-zero (kept in acc.grouped).
func (acc *accumulator) gather(members []resolvedTerm) []int32 {
	grouped := acc.grouped[:0]
	for _, m := range members {
		for _, p := range m.postings {
			if p.tf == 0 {
				continue
			}
			if acc.gtf[p.doc] == 0 {
				grouped = append(grouped, p.doc)
			}
			acc.gtf[p.doc] += m.alt * p.tf
		}
	}
	acc.grouped = grouped
	return grouped
}

// add adds c to doc's whole-request score and to its score for each
// clause in segs.
func (acc *accumulator) add(doc int32, c float32, segs uint8, nseg int) {
	if acc.score[doc] == 0 {
		acc.touched = append(acc.touched, doc)
	}
	acc.score[doc] += c
	if nseg > 1 {
		for m := segs; m != 0; m &= m - 1 {
			s := bits.TrailingZeros8(m)
			if acc.seg[s][doc] == 0 {
				acc.segTouched[s] = append(acc.segTouched[s], doc)
			}
			acc.seg[s][doc] += c
		}
	}
}

// lose adds x to doc's whole-request loss and to its loss for each
// clause in segs.
func (acc *accumulator) lose(doc int32, x float32, segs uint8, nseg int) {
	if acc.loss[doc] == 0 {
		acc.lossy = append(acc.lossy, doc)
	}
	acc.loss[doc] += x
	if nseg > 1 {
		for m := segs; m != 0; m &= m - 1 {
			acc.segLoss[bits.TrailingZeros8(m)][doc] += x
		}
	}
}

// scored is a candidate document, its raw score, and its place in name
// order (Index.order), which breaks ties.
type scored struct {
	doc   int32
	score float32
	order int32
}

// selectTop returns the k best of the documents ids by scores, best
// first (every non-zero one when k <= 0), in acc.heap, valid until the
// next call. Each doc becomes one integer key (see rankKey); the k
// smallest are kept in a bounded max-heap, so that a document scoring
// below the heap's worst costs one comparison and no key, and only they
// are sorted. order is each doc's place in name order, byOrder its
// inverse.
func selectTop(acc *accumulator, ids []int32, scores []float32, k int, order, byOrder []int32) []scored {
	var top []uint64
	if k <= 0 {
		top = acc.keys[:0]
		for _, d := range ids {
			if s := scores[d]; s > 0 {
				top = append(top, rankKey(s, order[d]))
			}
		}
	} else {
		top = keepSmallest(acc.keys[:0], ids, scores, k, order)
	}
	acc.keys = top
	slices.Sort(top)
	h := acc.heap[:0]
	for _, key := range top {
		o := int32(uint32(key))
		h = append(h, scored{doc: byOrder[o], score: math.Float32frombits(^uint32(key >> 32)), order: o})
	}
	acc.heap = h
	return h
}

// keepSmallest appends to heap (empty, reused storage) the k smallest
// rank keys of the docs ids with a positive score, in no particular
// order: a max-heap of at most k keys whose root is the worst kept.
func keepSmallest(heap []uint64, ids []int32, scores []float32, k int, order []int32) []uint64 {
	var floor float32 // once the heap is full, the root's score: lower cannot enter; 0 before
	for _, d := range ids {
		s := scores[d]
		if s < floor || !(s > 0) {
			continue
		}
		key := rankKey(s, order[d])
		if len(heap) < k {
			heap = append(heap, key)
			siftUp(heap, len(heap)-1)
		} else if key < heap[0] {
			heap[0] = key
			siftDown(heap, 0)
		} else {
			continue
		}
		if len(heap) == k {
			floor = math.Float32frombits(^uint32(heap[0] >> 32))
		}
	}
	return heap
}

// siftUp restores the max-heap order of h after h[i] was set.
func siftUp(h []uint64, i int) {
	for i > 0 {
		parent := (i - 1) / 2
		if h[parent] >= h[i] {
			return
		}
		h[parent], h[i] = h[i], h[parent]
		i = parent
	}
}

// siftDown restores the max-heap order of h after h[i] was lowered.
func siftDown(h []uint64, i int) {
	for {
		c := 2*i + 1
		if c >= len(h) {
			return
		}
		if c+1 < len(h) && h[c+1] > h[c] {
			c++
		}
		if h[i] >= h[c] {
			return
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
}

// rankKey packs a positive score and a place in name order into one
// integer, smaller first: the complement of the score's bits (which order
// as the float does) puts a higher score first, then the earlier name.
func rankKey(score float32, order int32) uint64 {
	return uint64(^math.Float32bits(score))<<32 | uint64(uint32(order))
}

// selectSmallest reorders keys so that its k smallest come first, in no
// particular order, 1 <= k <= len(keys): a quickselect with a three-way
// partition, its first pivot from a sample (see samplePivot).
func selectSmallest(keys []uint64, k int) {
	lo, hi, want := 0, len(keys)-1, k-1
	for first := true; lo < hi; first = false {
		var p uint64
		if first && len(keys) >= 4*pivotSamples {
			p = samplePivot(keys, want)
		} else {
			p = median3(keys[lo], keys[lo+(hi-lo)/2], keys[hi])
		}
		// Partition keys[lo:hi+1] into < p, == p and > p.
		lt, i, gt := lo, lo, hi
		for i <= gt {
			switch x := keys[i]; {
			case x < p:
				keys[lt], keys[i] = x, keys[lt]
				lt++
				i++
			case x > p:
				keys[i], keys[gt] = keys[gt], x
				gt--
			default:
				i++
			}
		}
		switch {
		case want < lt:
			hi = lt - 1
		case want > gt:
			lo = gt + 1
		default:
			return
		}
	}
}

// pivotSamples is how many of the keys samplePivot looks at.
const pivotSamples = 15

// samplePivot returns a key that an even sample puts a little above the
// (want+1)-th smallest, so that the first partition leaves few keys
// below it, where a median pivot leaves half (keys has at least
// 4*pivotSamples).
func samplePivot(keys []uint64, want int) uint64 {
	var s [pivotSamples]uint64
	step := len(keys) / pivotSamples
	for i := range s {
		s[i] = keys[i*step+step/2]
	}
	slices.Sort(s[:])
	return s[min(want*pivotSamples/len(keys)+2, pivotSamples-1)]
}

func median3(a, b, c uint64) uint64 {
	if a > b {
		a, b = b, a
	}
	if b > c {
		b = c
	}
	return max(a, b)
}
