package lessons

import (
	"cmp"
	"context"
	"math"
	"slices"
	"time"

	"github.com/mcp-router/mcp-router/routing"
)

// Adjustment is what the lessons say about one tool for one query.
type Adjustment struct {
	Tool string
	// Delta is added to the tool's score: in [−MaxPenalty, MaxBoost].
	Delta float64
	// Lessons are the IDs of the lessons that applied, strongest first.
	Lessons []int64
	// Similarity is the highest similarity of those lessons to the query.
	Similarity float64
	// Corrected tells that a person's correction (an Avoid lesson from
	// feedback) applies and no Use lesson outweighs it: the tool is kept
	// off the hand-over for such requests, not merely ranked lower
	// (see Apply).
	Corrected bool
}

// match is one lesson that applies to a query.
type match struct {
	e      *entry
	slot   int32
	sim    float64
	weight float64 // sim × decay
}

// accumulator holds Adjust's per-lesson state, by slot. Adjust leaves
// inter and at zeroed for the next call.
type accumulator struct {
	inter   []float64 // Σ idf of the terms shared with the query
	at      []int32   // 1 + index in matches; 0 when not matched
	touched []int32   // slots with inter > 0
	matches []match
	// The tools' profiles (profile.go): each voted-for tool, its index
	// in tools, and the tools voted for by the term being read.
	tools     []toolVotes
	toolAt    map[string]int32
	termTools []int32
	// principal is whose request is scored: only its own lessons and the
	// shared ones apply, or every lesson when all is set (Shared).
	principal string
	all       bool
}

// sees reports whether lesson l applies to the request being scored.
func (acc *accumulator) sees(l *Lesson) bool { return acc.all || l.visible(acc.principal) }

// Adjust is AdjustFor the shared lessons alone (no principal's own).
func (m *Memory) Adjust(ctx context.Context, query string) []Adjustment {
	return m.AdjustFor(ctx, "", query)
}

// AdjustFor returns the score deltas the lessons give tools for query of
// principal, the largest change first; nil when no lesson is similar
// enough. Only the principal's own lessons and the shared ones apply
// (every one, with Shared set). It marks the lessons that applied as used,
// in memory (Flush persists the marks). It reads the index without a lock
// and does no I/O, unless Embed is set, in which case it embeds query
// (and, if that fails, stays lexical).
func (m *Memory) AdjustFor(ctx context.Context, principal, query string) []Adjustment {
	s := m.snap.Load()
	if len(s.entries) == 0 {
		return nil
	}
	var qvec []float32
	if s.embedded && m.opts.Embed != nil {
		if v, err := m.opts.Embed(ctx, query); err == nil {
			qvec = unit(slices.Clone(v))
		} else {
			m.opts.Logger.Debug("query not embedded, lessons matched lexically", "err", err)
		}
	}
	acc := m.getAcc(len(s.entries))
	defer m.accs.Put(acc)
	acc.principal, acc.all = principal, m.opts.Shared
	terms := m.terms(query)
	qw := m.lexical(s, terms, acc)
	if qvec != nil {
		m.semantic(s, qvec, acc)
	}
	m.collect(s, query, acc)
	for _, mt := range acc.matches {
		acc.at[mt.slot] = 0
	}
	now := m.now()
	// Decayed weights are read before any lesson is marked used.
	for i := range acc.matches {
		mt := &acc.matches[i]
		mt.weight = mt.sim * m.decay(now, mt.e.lastUsed.Load())
	}
	profiles := m.profile(s, terms, qw, acc, now)
	if len(acc.matches) == 0 && len(profiles) == 0 {
		return nil
	}
	for _, mt := range acc.matches {
		mt.e.markUsed(now.UnixNano())
	}
	return m.combine(acc.matches, profiles)
}

// Rerank applies the lessons for query of principal to hits (see Apply).
// It is the one call a router needs: Rerank(ctx, principal, query,
// candidates).
func (m *Memory) Rerank(ctx context.Context, principal, query string, hits []routing.Hit) []routing.Hit {
	return Apply(hits, m.AdjustFor(ctx, principal, query))
}

func (m *Memory) getAcc(n int) *accumulator {
	acc, _ := m.accs.Get().(*accumulator)
	if acc == nil {
		acc = &accumulator{}
	}
	if cap(acc.inter) < n {
		acc.inter, acc.at = make([]float64, n), make([]int32, n)
	}
	if acc.toolAt == nil {
		acc.toolAt = map[string]int32{}
	}
	acc.inter, acc.at = acc.inter[:n], acc.at[:n]
	acc.touched, acc.matches = acc.touched[:0], acc.matches[:0]
	return acc
}

// lexical scores the lessons that share a term with the query's terms
// (the inverted index's candidates; no other lesson can reach the gate)
// by weighted Jaccard, Σ idf(shared) / Σ idf(union), the union's weight
// being the query's plus the lesson's minus the shared, records those at
// or above MinSimilarity, and returns the query's weight.
func (m *Memory) lexical(s *snapshot, terms []string, acc *accumulator) float64 {
	var qw float64
	for _, t := range terms {
		p := s.terms[t]
		if p == nil {
			qw += s.rareIDF
			continue
		}
		qw += p.idf
		for _, slot := range p.slots {
			if acc.inter[slot] == 0 {
				acc.touched = append(acc.touched, slot)
			}
			acc.inter[slot] += p.idf
		}
	}
	for _, slot := range acc.touched {
		inter := acc.inter[slot]
		acc.inter[slot] = 0 // leave the accumulator clean for the next call
		if sim := inter / (qw + s.weights[slot] - inter); sim >= m.opts.MinSimilarity {
			acc.add(s, slot, min(sim, 1))
		}
	}
	return qw
}

// semantic raises each lesson's similarity to its rescaled embedding
// cosine with the query, when higher.
func (m *Memory) semantic(s *snapshot, qvec []float32, acc *accumulator) {
	floor := m.opts.EmbedFloor
	for slot, e := range s.entries {
		if e.vec == nil {
			continue
		}
		sim := min(1, (dot(qvec, e.vec)-floor)/(1-floor))
		if sim >= m.opts.MinSimilarity {
			acc.add(s, int32(slot), sim)
		}
	}
}

// collect adds the lessons whose normalised query is query's, at
// similarity 1.
func (m *Memory) collect(s *snapshot, query string, acc *accumulator) {
	for _, slot := range s.byNorm[normalize(query)] {
		acc.add(s, slot, 1)
	}
}

// add records the lesson in slot at sim, or raises its recorded
// similarity to sim.
func (acc *accumulator) add(s *snapshot, slot int32, sim float64) {
	if !acc.sees(&s.entries[slot].lesson) {
		return
	}
	if i := acc.at[slot]; i > 0 {
		acc.matches[i-1].sim = max(acc.matches[i-1].sim, sim)
		return
	}
	acc.matches = append(acc.matches, match{e: s.entries[slot], slot: slot, sim: sim})
	acc.at[slot] = int32(len(acc.matches))
}

// decay is 2^(−age/HalfLife), age counted from the lesson's last use.
func (m *Memory) decay(now time.Time, lastUsed int64) float64 {
	age := now.UnixNano() - lastUsed
	if age <= 0 {
		return 1
	}
	return math.Exp2(-float64(age) / float64(m.opts.HalfLife))
}

// combine turns the matches and the tools' profiles into one adjustment
// per tool: noisy OR of the positive weights (or the profile's weight,
// ProfileWeight × its similarity, when larger) times MaxBoost, minus that
// of the negative weights times MaxPenalty. It takes the profiles it
// merges into a matched tool out of profiles.
func (m *Memory) combine(matches []match, profiles map[string]profileMatch) []Adjustment {
	slices.SortFunc(matches, func(a, b match) int {
		return cmp.Or(cmp.Compare(a.e.lesson.Tool, b.e.lesson.Tool), cmp.Compare(b.weight, a.weight),
			cmp.Compare(a.e.lesson.ID, b.e.lesson.ID))
	})
	var out []Adjustment
	for i := 0; i < len(matches); {
		tool := matches[i].e.lesson.Tool
		missPos, missNeg := 1.0, 1.0 // Π(1 − w) per polarity
		a := Adjustment{Tool: tool}
		use, corrected := 0.0, 0.0 // the strongest weight of each
		for ; i < len(matches) && matches[i].e.lesson.Tool == tool; i++ {
			mt := matches[i]
			if mt.e.lesson.Polarity == Use {
				missPos *= 1 - mt.weight
				use = max(use, mt.weight)
			} else {
				missNeg *= 1 - mt.weight
				if mt.e.lesson.Source == SourceFeedback {
					corrected = max(corrected, mt.weight)
				}
			}
			a.Lessons = append(a.Lessons, mt.e.lesson.ID)
			a.Similarity = max(a.Similarity, mt.sim)
		}
		if pm, ok := profiles[tool]; ok {
			// The profile pools these lessons' evidence with others': the
			// larger of the two boosts, not both.
			a = withProfile(a, pm)
			missPos = min(missPos, 1-m.opts.ProfileWeight*pm.sim)
			delete(profiles, tool)
		}
		a.Delta = m.opts.MaxBoost*(1-missPos) - m.opts.MaxPenalty*(1-missNeg)
		a.Corrected = corrected > use
		out = append(out, a)
	}
	for tool, pm := range profiles { // the tools no lesson matched
		a := withProfile(Adjustment{Tool: tool}, pm)
		a.Delta = m.opts.MaxBoost * m.opts.ProfileWeight * pm.sim
		out = append(out, a)
	}
	slices.SortStableFunc(out, func(a, b Adjustment) int {
		return cmp.Or(cmp.Compare(math.Abs(b.Delta), math.Abs(a.Delta)), cmp.Compare(a.Tool, b.Tool))
	})
	return out
}

// withProfile adds a tool's profile match to its adjustment: the lessons
// that voted, after those that matched, and the similarity when higher.
func withProfile(a Adjustment, pm profileMatch) Adjustment {
	for _, id := range pm.lessons {
		if !slices.Contains(a.Lessons, id) {
			a.Lessons = append(a.Lessons, id)
		}
	}
	a.Similarity = max(a.Similarity, pm.sim)
	return a
}
