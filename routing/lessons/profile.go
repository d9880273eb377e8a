package lessons

import (
	"slices"
	"time"
)

// Tool profiles. A lesson applies to a query only when the two are
// similar as wholes (see the package doc), so what one lesson teaches
// reaches few other queries: on the shared routing benchmark, of the
// requests like the taught ones but not taught, lessons lifted the gold
// tool into the top 5 for 3 points more on bfcl and 0.4 on metatool.
// Yet the lessons of one tool, taken together, say which words people
// use for it ("book a flight", "cheap flights to Rome", "hotels in
// Lisbon" for a travel tool whose description says neither flight nor
// hotel). So the positive lessons also vote, word by word: a term of the
// query that positive lessons hold points to each tool they teach in
// proportion to their (decayed) weight, p(tool | term) = Σ_tool w /
// (Σ_all w + 1), the 1 keeping a word that one lesson holds at half, and
// a tool's profile similarity is the share of the query's IDF weight (a
// term no lesson holds weighing as in the lexical similarity) that points
// to it:
//
//	profile(q, tool) = Σ_{t ∈ q} idf(t) · p(tool | t) / Σ_{t ∈ q} idf(t)
//
// A tool at least two of whose lessons voted, and whose profile
// similarity reaches ProfileFloor [0.2], is boosted by MaxBoost ×
// ProfileWeight [0.5] × that similarity, or by what its matching lessons
// give when that is more (the profile pools the same evidence, so the two
// do not add up), and its voting lessons are marked used. One lesson is
// no profile: what a query shares with it is the similarity gate's to
// judge.
//
// Measured as routing/eval TestLessonsMeasurement teaches (one lesson for
// each of half of the queries whose gold tool ranked below 5), the share
// of the other half whose gold tool reaches the top 5 rose from 0.098 to
// 0.136 on bfcl and from 0.021 to 0.085 on metatool (seal_tools, with 17
// lessons, unchanged), and R@5 over every query from 0.919 to 0.922 and
// from 0.788 to 0.797, with no query's R@5 lowered. At a floor of 0.15
// more were lifted on metatool (0.125) but a query there lost, and three
// times as many wrong tools entered a top 5 (85 against 29); a weight of
// 1 gained 0.002 more.

// profileLessons is the fewest lessons of a tool that must vote for its
// profile to count: what one lesson says is its similarity's to judge
// (a query holding a few of its words is not like it, see the package
// doc); a profile pools several.
const profileLessons = 2

// toolVotes is one tool's profile as a query is scored.
type toolVotes struct {
	tool  string
	sum   float64 // Σ idf(t) · p(tool | t) over the query's terms so far
	term  float64 // Σ w of the tool's lessons holding the current term
	slots []int32 // the lessons that voted, for marking them used
}

// profile scores the query's terms (as lexical read them, qw their
// weight) against the tools' profiles and returns, by tool, the weight of
// the profiles at or above ProfileFloor, marking their voting lessons
// used at now.
func (m *Memory) profile(s *snapshot, terms []string, qw float64, acc *accumulator, now time.Time) map[string]profileMatch {
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
				var slots []int32 // the storage of an earlier query's, when there is one
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
	var out map[string]profileMatch
	for i := range acc.tools {
		tv := &acc.tools[i]
		sim := tv.sum / qw
		if sim < m.opts.ProfileFloor {
			continue
		}
		// A lesson holding several of the query's terms voted once each.
		slices.Sort(tv.slots)
		if tv.slots = slices.Compact(tv.slots); len(tv.slots) < profileLessons {
			continue // one lesson's word is its gate's to judge
		}
		if out == nil {
			out = map[string]profileMatch{}
		}
		pm := profileMatch{sim: min(sim, 1)}
		for _, slot := range tv.slots {
			e := s.entries[slot]
			pm.lessons = append(pm.lessons, e.lesson.ID)
			e.markUsed(now.UnixNano())
		}
		out[tv.tool] = pm
	}
	return out
}

// profileMatch is a tool whose profile a query reaches: its similarity
// and the lessons that voted, by ID.
type profileMatch struct {
	sim     float64
	lessons []int64
}
