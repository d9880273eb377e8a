package lessons

import (
	"cmp"
	"context"
	"math"
	"slices"
	"time"

	"github.com/mcp-router/mcp-router/routing"
	"github.com/mcp-router/mcp-router/routing/internal/vec"
)

// Adjustment is what the lessons say about one tool for one query.
type Adjustment struct {
	Tool  string
	Delta float64 // added to the tool's score: in [−0.5, 0.3] (maxPenalty, maxBoost)
	// Corrected: an Avoid lesson from feedback applies and no Use lesson
	// outweighs it, so Apply removes the tool rather than ranking it lower.
	Corrected bool
}

// match is one lesson that applies to a query.
type match struct {
	e      *entry
	slot   int32
	sim    float64
	weight float64 // sim × decay
}

// accumulator holds AdjustFor's per-lesson state by slot, pooled (inter
// and at are left zeroed).
type accumulator struct {
	inter   []float64 // Σ idf of the terms shared with the query
	at      []int32   // 1 + index in matches; 0 when not matched
	touched []int32   // slots with inter > 0
	matches []match
	// The profiles (profile.go): voted-for tools, their index in tools,
	// and the tools the current term votes for.
	tools     []toolVotes
	toolAt    map[string]int32
	termTools []int32
	principal string // whose request: its own lessons and shared ones apply
	all       bool   // Shared: every lesson applies
}

// sees reports whether lesson l applies to the request being scored.
func (acc *accumulator) sees(l *Lesson) bool { return acc.all || l.visible(acc.principal) }

// AdjustFor returns the score deltas the principal's own and the shared
// lessons (every lesson, with Shared) give tools for query, the largest
// first; nil when none applies. It marks the lessons applied as used.
func (m *Memory) AdjustFor(ctx context.Context, principal, query string) []Adjustment {
	s := m.snap.Load()
	if len(s.entries) == 0 {
		return nil
	}
	var qvec []float32
	if s.embedded && m.opts.Embed != nil {
		if v, err := m.opts.Embed(ctx, query); err == nil {
			qvec = vec.Unit(slices.Clone(v))
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
	for _, slot := range s.byNorm[normalize(query)] {
		acc.add(s, slot, 1)
	}
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
func (m *Memory) Rerank(ctx context.Context, principal, query string, hits []routing.Hit) []routing.Hit {
	return Apply(hits, m.AdjustFor(ctx, principal, query))
}

func (m *Memory) getAcc(n int) *accumulator {
	acc := m.accs.Get().(*accumulator)
	if cap(acc.inter) < n {
		acc.inter, acc.at = make([]float64, n), make([]int32, n)
	}
	acc.inter, acc.at = acc.inter[:n], acc.at[:n]
	acc.touched, acc.matches = acc.touched[:0], acc.matches[:0]
	return acc
}

// lexical records the lessons whose weighted Jaccard with the query reaches
// minSimilarity, and returns the query's weight.
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
		if sim := inter / (qw + s.weights[slot] - inter); sim >= minSimilarity {
			acc.add(s, slot, min(sim, 1))
		}
	}
	return qw
}

// semantic raises each lesson's similarity to its rescaled cosine.
func (m *Memory) semantic(s *snapshot, qvec []float32, acc *accumulator) {
	for slot, e := range s.entries {
		if e.vec == nil {
			continue
		}
		sim := min(1, (vec.Dot(qvec, e.vec)-embedFloor)/(1-embedFloor))
		if sim >= minSimilarity {
			acc.add(s, int32(slot), sim)
		}
	}
}

// add records the lesson in slot at sim, or raises its similarity to sim.
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

// decay is 2^(−age/halfLife), age counted from the lesson's last use.
func (m *Memory) decay(now time.Time, lastUsed int64) float64 {
	age := now.UnixNano() - lastUsed
	if age <= 0 {
		return 1
	}
	return math.Exp2(-float64(age) / float64(halfLife))
}

// combine turns the matches and the profiles (emptied as it goes) into one
// adjustment per tool (package doc; a profile's weight counts when larger).
func (m *Memory) combine(matches []match, profiles map[string]float64) []Adjustment {
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
		}
		if sim, ok := profiles[tool]; ok {
			missPos = min(missPos, 1-m.opts.ProfileWeight*sim)
			delete(profiles, tool)
		}
		a.Delta = maxBoost*(1-missPos) - maxPenalty*(1-missNeg)
		a.Corrected = corrected > use
		out = append(out, a)
	}
	for tool, sim := range profiles { // the tools no lesson matched
		out = append(out, Adjustment{Tool: tool, Delta: maxBoost * m.opts.ProfileWeight * sim})
	}
	slices.SortStableFunc(out, func(a, b Adjustment) int {
		return cmp.Or(cmp.Compare(math.Abs(b.Delta), math.Abs(a.Delta)), cmp.Compare(a.Tool, b.Tool))
	})
	return out
}

// Apply returns a copy of hits with the deltas added, stably re-sorted by
// the unclamped sums, scores clamped to [0, 1]; a Corrected tool is
// removed, and a tool not in hits never brought in.
func Apply(hits []routing.Hit, adj []Adjustment) []routing.Hit {
	if len(hits) == 0 || len(adj) == 0 {
		return hits
	}
	type scored struct {
		hit routing.Hit
		key float64
	}
	out := make([]scored, 0, len(hits))
	changed := false
	for _, h := range hits {
		i := slices.IndexFunc(adj, func(a Adjustment) bool { return a.Tool == h.Name }) // a query has few
		if i >= 0 && adj[i].Corrected {
			changed = true
			continue
		}
		sc := scored{hit: h, key: h.Score}
		if i >= 0 && adj[i].Delta != 0 {
			sc.key += adj[i].Delta
			sc.hit.Score = min(1, max(0, sc.key))
			changed = true
		}
		out = append(out, sc)
	}
	if !changed {
		return hits
	}
	slices.SortStableFunc(out, func(a, b scored) int { return cmp.Compare(b.key, a.key) })
	res := make([]routing.Hit, len(out))
	for i, s := range out {
		res[i] = s.hit
	}
	return res
}
