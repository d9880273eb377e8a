package lessons

import (
	"cmp"
	"math"
	"slices"
	"strconv"
	"sync/atomic"
	"time"
)

// entry is one lesson in memory, fixed but for the use marks, which
// AdjustFor sets without a lock.
type entry struct {
	lesson Lesson    // LastUsed as learned; see lastUsed
	norm   string    // normalised query
	key    string    // dedup key: principal, normalised query, tool, polarity
	terms  []string  // distinct terms of the query
	vec    []float32 // unit embedding of the query; nil when none

	lastUsed atomic.Int64 // unix nanoseconds
	dirty    atomic.Bool  // lastUsed is newer than the store's copy
}

func newEntry(l Lesson, terms []string, vec []float32) *entry {
	norm := normalize(l.Query)
	e := &entry{lesson: l, norm: norm, key: dedupKey(l.Principal, norm, l.Tool, l.Polarity), terms: terms, vec: vec}
	e.lastUsed.Store(l.LastUsed.UnixNano())
	return e
}

// current returns the lesson with its latest use.
func (e *entry) current() Lesson {
	l := e.lesson
	l.LastUsed = time.Unix(0, e.lastUsed.Load()).UTC()
	return l
}

// markUsed records a use at now (unix nanoseconds) unless a later one is.
func (e *entry) markUsed(now int64) {
	for {
		old := e.lastUsed.Load()
		if old >= now {
			return
		}
		if e.lastUsed.CompareAndSwap(old, now) {
			e.dirty.Store(true)
			return
		}
	}
}

func dedupKey(principal, norm, tool string, p Polarity) string {
	return principal + "\x00" + norm + "\x00" + tool + "\x00" + strconv.Itoa(int(p))
}

// snapshot is an immutable inverted index of the lessons; every change
// builds a new one (under a millisecond for a thousand).
type snapshot struct {
	entries  []*entry                 // by slot, in ID order
	weights  []float64                // by slot: Σ idf of the entry's terms
	terms    map[string]*termPostings // term → the slots holding it
	byNorm   map[string][]int32       // normalised query → slots
	byKey    map[string]*entry
	byID     map[int64]*entry
	rareIDF  float64 // idf of a term no lesson has (weighs as df = 1)
	embedded bool    // some entry has a vector
	positive bool    // some entry is a positive lesson (profile.go)
}

type termPostings struct {
	idf   float64
	df    int // distinct queries holding the term
	slots []int32
}

// build indexes entries.
func build(entries []*entry) *snapshot {
	entries = slices.Clone(entries)
	slices.SortFunc(entries, func(a, b *entry) int { return cmp.Compare(a.lesson.ID, b.lesson.ID) })
	s := &snapshot{
		entries: entries,
		weights: make([]float64, len(entries)),
		terms:   map[string]*termPostings{},
		byNorm:  make(map[string][]int32, len(entries)),
		byKey:   make(map[string]*entry, len(entries)),
		byID:    make(map[int64]*entry, len(entries)),
	}
	for i, e := range entries {
		slot := int32(i)
		// df counts distinct queries: one taught with two tools is one.
		newQuery := len(s.byNorm[e.norm]) == 0
		for _, t := range e.terms {
			p := s.terms[t]
			if p == nil {
				p = &termPostings{}
				s.terms[t] = p
			}
			p.slots = append(p.slots, slot)
			if newQuery {
				p.df++
			}
		}
		s.byNorm[e.norm] = append(s.byNorm[e.norm], slot)
		s.byKey[e.key] = e
		s.byID[e.lesson.ID] = e
		s.embedded = s.embedded || e.vec != nil
		s.positive = s.positive || e.lesson.Polarity == Use
	}
	n := len(s.byNorm)
	for _, p := range s.terms {
		p.idf = idf(n, p.df)
	}
	for slot, e := range entries { // in term order, so that sums are reproducible
		for _, t := range e.terms {
			s.weights[slot] += s.terms[t].idf
		}
	}
	s.rareIDF = idf(n, 1)
	return s
}

// idf is the BM25 inverse document frequency of a term in df of n queries.
func idf(n, df int) float64 {
	df = max(df, 1)
	return math.Log(1 + (float64(n)-float64(df)+0.5)/(float64(df)+0.5))
}

// distinct returns terms without repeats, in order, reusing the slice.
func distinct(terms []string) []string {
	seen := make(map[string]bool, len(terms))
	return slices.DeleteFunc(terms, func(t string) bool {
		dup := seen[t]
		seen[t] = true
		return dup
	})
}
