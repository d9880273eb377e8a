package lessons

import (
	"slices"
	"time"
)

// Tool profiles. A tool's lessons together say which words people use for
// it, so positive lessons also vote word by word: a query term held by
// positive lessons points to each tool they teach by their decayed weight,
// p(tool | term) = Σ_tool w / (Σ_all w + 1), and
//
//	profile(q, tool) = Σ_{t ∈ q} idf(t) · p(tool | t) / Σ_{t ∈ q} idf(t)
//
// A tool with at least profileLessons voting lessons whose profile reaches
// profileFloor [0.2] gets maxBoost × ProfileWeight [0.5] × profile, or what
// its matching lessons give when more (the two pool the same evidence). On
// routing/eval TestLessonsMeasurement this lifted more held-out queries'
// gold tools into the top 5 (bfcl 0.098 → 0.136, metatool 0.021 → 0.085)
// and lowered none; a floor of 0.15 let three times as many wrong tools in.

// profileLessons is the fewest voting lessons that make a profile: what
// one lesson says is its similarity gate's to judge.
const profileLessons = 2

// toolVotes is one tool's profile as a query is scored.
type toolVotes struct {
	tool  string
	sum   float64 // Σ idf(t) · p(tool | t) over the query's terms so far
	term  float64 // Σ w of the tool's lessons holding the current term
	slots []int32 // the lessons that voted, for marking them used
}

// profile returns, by tool, the similarity of the profiles the query's
// terms (of weight qw) reach, marking their voting lessons used at now.
func (m *Memory) profile(s *snapshot, terms []string, qw float64, acc *accumulator, now time.Time) map[string]float64 {
	if m.opts.ProfileWeight <= 0 || qw <= 0 || !s.positive {
		return nil
	}
	clear(acc.toolAt)
	acc.tools = acc.tools[:0]
	for _, t := range terms {
		p := s.terms[t]
		if p == nil {
			continue
		}
		acc.termTools = acc.termTools[:0]
		var all float64
		for _, slot := range p.slots {
			e := s.entries[slot]
			if e.lesson.Polarity != Use || !acc.sees(&e.lesson) {
				continue
			}
			w := m.decay(now, e.lastUsed.Load())
			all += w
			i, ok := acc.toolAt[e.lesson.Tool]
			if !ok {
				i = int32(len(acc.tools))
				acc.toolAt[e.lesson.Tool] = i
				var slots []int32 // reuses an earlier query's storage
				if len(acc.tools) < cap(acc.tools) {
					slots = acc.tools[:i+1][i].slots[:0]
				}
				acc.tools = append(acc.tools, toolVotes{tool: e.lesson.Tool, slots: slots})
			}
			tv := &acc.tools[i]
			if tv.term == 0 {
				acc.termTools = append(acc.termTools, i)
			}
			tv.term += w
			tv.slots = append(tv.slots, slot)
		}
		for _, i := range acc.termTools {
			tv := &acc.tools[i]
			tv.sum += p.idf * tv.term / (all + 1)
			tv.term = 0
		}
	}
	var out map[string]float64
	for i := range acc.tools {
		tv := &acc.tools[i]
		sim := tv.sum / qw
		if sim < profileFloor {
			continue
		}
		slices.Sort(tv.slots) // a lesson voted once per term it holds
		if tv.slots = slices.Compact(tv.slots); len(tv.slots) < profileLessons {
			continue
		}
		if out == nil {
			out = map[string]float64{}
		}
		for _, slot := range tv.slots {
			s.entries[slot].markUsed(now.UnixNano())
		}
		out[tv.tool] = min(sim, 1)
	}
	return out
}
