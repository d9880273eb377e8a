// Package fuse decides which tools go on the belt for one turn.
//
// [Fuse] merges the tools the model states it needs with the query
// router's scored candidates under a [Policy] (the profile's routing.fuse
// section) into the list the proxy shows. [Breaker] decides, per session,
// whether request_more_tools stays on the belt. Pure logic: no I/O.
package fuse

import (
	"cmp"
	"math"
	"slices"
	"strings"
)

// Candidate is one tool the query router scored for this turn.
type Candidate struct {
	Tool  string  `json:"tool"`
	Score float64 `json:"score"`
}

// Input is what one turn gives [Fuse].
type Input struct {
	Route Route    // the main router's verdict; see [Fuse] for each route
	Needs []string // the tools the model says it needs, in its order
	// Candidates are the query router's scored tools, in any order, maybe
	// repeated.
	Candidates []Candidate
	// Known reports whether a name is in the catalog; nil: every name is.
	Known func(name string) bool
	// UserFacing reports whether a tool may be shown to the model (with
	// Policy.RequireUserFacing); nil: every tool may.
	UserFacing func(name string) bool
}

// Result is the fused belt for one turn.
type Result struct {
	// Tools is the final list, never nil.
	Tools []string `json:"tools"`
	// Unknown lists needs not in the catalog, once each, in order stated.
	Unknown []string `json:"unknown,omitempty"`
}

// Fuse merges the model's needs with the query router's candidates into the
// final tool list. p should have passed [Policy.Validate] (a bad one does
// not panic). The steps:
//
//  1. Needs: trimmed, blanks skipped; names Known rejects go to Unknown;
//     the allowlist and user-facing filters drop others.
//  2. Candidates: blanks skipped; each tool at its highest score (NaN as
//     -Inf), sorted by descending score, ties in input order; dropped when
//     unknown, filtered, below MinQRScore, or (no need left and not
//     AdoptQRWhenNeedsEmpty) not adopted.
//  3. Merge by Order; collapse duplicates (always for MergeByScore); with
//     PreferExactNeeds, move needs to the front in the order stated.
//  4. Cap at MaxTools.
//  5. Route: SIMPLE_TOOL caps at SimpleMaxPrimary; GENERAL_CHAT and EXIT
//     get no tools; COMPLEX_TOOL fills up to min(ComplexMinPrimary,
//     MaxTools) distinct tools from the candidates dropped below the score
//     or not adopted, best first; any other route is left as it is.
func Fuse(p Policy, in Input) Result {
	f := &fuser{p: p, in: in}
	needs, unknown := f.needs()
	qr, spare := f.candidates(len(needs) == 0)
	list := f.merge(needs, qr)
	list = f.collapse(list)
	list = f.preferNeeds(list, needs)
	list = list[:min(len(list), max(p.MaxTools, 0))]
	list = f.cardinality(list, spare)
	return Result{Tools: toolNames(list), Unknown: unknown}
}

// entry is a tool on its way to the belt; needs score +Inf.
type entry struct {
	tool  string
	score float64
}

// fuser carries one Fuse call's policy and input.
type fuser struct {
	p  Policy
	in Input
}

// needs runs step 1.
func (f *fuser) needs() (needs []entry, unknown []string) {
	for _, name := range f.in.Needs {
		name = strings.TrimSpace(name)
		switch {
		case name == "":
		case f.in.Known != nil && !f.in.Known(name):
			if !slices.Contains(unknown, name) {
				unknown = append(unknown, name)
			}
		case f.admit(name):
			needs = append(needs, entry{tool: name, score: math.Inf(1)})
		}
	}
	return needs, unknown
}

// admit applies the hard filters, allowlist then user-facing.
func (f *fuser) admit(tool string) bool { return f.p.Admits(tool, f.in.UserFacing) }

// candidates runs step 2. spare holds the soft-dropped candidates a
// COMPLEX_TOOL turn may fill from, best first.
func (f *fuser) candidates(needsEmpty bool) (qr, spare []entry) {
	for _, c := range bestPerTool(f.in.Candidates) {
		switch {
		case f.in.Known != nil && !f.in.Known(c.tool), !f.admit(c.tool):
		case !(c.score >= f.p.MinQRScore), needsEmpty && !f.p.AdoptQRWhenNeedsEmpty:
			spare = append(spare, c)
		default:
			qr = append(qr, c)
		}
	}
	return qr, spare
}

// bestPerTool keeps each tool once at its highest score, sorted by
// descending score, ties in order of first appearance.
func bestPerTool(cands []Candidate) []entry {
	at := make(map[string]int, len(cands))
	out := make([]entry, 0, len(cands))
	for _, c := range cands {
		tool := strings.TrimSpace(c.Tool)
		if tool == "" {
			continue
		}
		score := c.Score
		if math.IsNaN(score) {
			score = math.Inf(-1)
		}
		if i, ok := at[tool]; ok {
			out[i].score = max(out[i].score, score)
			continue
		}
		at[tool] = len(out)
		out = append(out, entry{tool: tool, score: score})
	}
	slices.SortStableFunc(out, func(a, b entry) int { return cmp.Compare(b.score, a.score) })
	return out
}

// merge concatenates by Order. Needs score +Inf and qr is sorted, so
// needs then qr is also MergeByScore's order.
func (f *fuser) merge(needs, qr []entry) []entry {
	if f.p.Order == QRFirst {
		return slices.Concat(qr, needs)
	}
	return slices.Concat(needs, qr)
}

// collapse keeps the first entry of each tool.
func (f *fuser) collapse(list []entry) []entry {
	if !f.p.CollapseDuplicates && f.p.Order != MergeByScore {
		return list
	}
	seen := make(map[string]bool, len(list))
	return slices.DeleteFunc(list, func(e entry) bool {
		dup := seen[e.tool]
		seen[e.tool] = true
		return dup
	})
}

// preferNeeds stably moves entries naming a need to the front, ordered as
// the needs were stated; the rest keep their order.
func (f *fuser) preferNeeds(list, needs []entry) []entry {
	if !f.p.PreferExactNeeds || len(needs) == 0 {
		return list
	}
	rank := make(map[string]int, len(needs))
	for i, n := range slices.Backward(needs) {
		rank[n.tool] = i // backwards, so the first statement wins
	}
	key := func(e entry) int {
		if r, ok := rank[e.tool]; ok {
			return r
		}
		return len(needs)
	}
	slices.SortStableFunc(list, func(a, b entry) int { return cmp.Compare(key(a), key(b)) })
	return list
}

// cardinality runs step 5.
func (f *fuser) cardinality(list, spare []entry) []entry {
	switch f.in.Route {
	case RouteSimple:
		return list[:min(len(list), max(f.p.SimpleMaxPrimary, 0))]
	case RouteGeneralChat, RouteExit:
		return list[:0]
	case RouteComplex:
		return f.fill(list, spare, min(f.p.ComplexMinPrimary, f.p.MaxTools))
	default:
		return list
	}
}

// fill appends spare candidates, best first, until list holds want
// distinct tools.
func (f *fuser) fill(list, spare []entry, want int) []entry {
	have := make(map[string]bool, len(list))
	for _, e := range list {
		have[e.tool] = true
	}
	for _, e := range spare {
		if len(have) >= want || len(list) >= f.p.MaxTools {
			break
		}
		if have[e.tool] {
			continue
		}
		have[e.tool] = true
		list = append(list, e)
	}
	return list
}

func toolNames(list []entry) []string {
	names := make([]string, len(list))
	for i, e := range list {
		names[i] = e.tool
	}
	return names
}
