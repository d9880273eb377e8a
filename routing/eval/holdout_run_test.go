package eval

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mcp-router/mcp-router/routing"
)

// HoldOutReport tells how an index scores the top tool of each query
// with its gold tools in the catalog and with them removed (held out):
// the second is what the router sees when the right tool is absent, where
// a good calibration scores the top tool under the noise floor so that
// the router says nothing matches instead of offering junk.
type HoldOutReport struct {
	Name    string // dataset name, for tables; HoldOut leaves it empty
	Queries int    // queries with gold tools
	// GoldTop1 is the share of queries whose top tool is a gold one, and
	// GoldKept the share whose top tool is a gold one scoring at least
	// the router's threshold.
	GoldTop1, GoldKept float64
	// Present is the top tool's score over the queries whose top tool is
	// a gold one; Absent the top tool's score (0 when nothing matches)
	// over every query, ranked without its gold tools.
	Present, Absent ScoreDist
	// Collisions is the share of queries, ranked without their gold
	// tools, whose top two would raise the router's collision alert.
	Collisions float64
}

// ScoreDist summarises scores: their 10th, 50th and 90th percentiles, and
// the shares at or above the router's noise floor and threshold.
type ScoreDist struct {
	N                    int
	P10, P50, P90        float64
	AboveFloor, AboveThr float64
}

// HoldOut ranks each query's top tools twice: in ix as it is, and in a
// copy of ix without the query's gold tools (every member of every gold
// group), and reports the top tool's calibrated score in both.
func HoldOut(ix *routing.Index, tools []routing.Tool, queries []Query) HoldOutReport {
	var rep HoldOutReport
	var present, absent []float64
	var top1, kept, collisions int
	for _, q := range queries {
		gold := goldNames(q)
		if len(gold) == 0 {
			continue
		}
		rep.Queries++
		if hits := ix.Search(q.Query, 1); len(hits) > 0 && slices.Contains(gold, hits[0].Name) {
			top1++
			present = append(present, hits[0].Score)
			if hits[0].Score >= routing.DefaultThreshold {
				kept++
			}
		}
		withoutTools(ix, tools, gold, func() {
			hits := ix.Search(q.Query, 2)
			if len(hits) == 0 {
				absent = append(absent, 0)
				return
			}
			absent = append(absent, hits[0].Score)
			if len(hits) == 2 && collide(ix, hits[0], hits[1]) {
				collisions++
			}
		})
	}
	if rep.Queries == 0 {
		return rep
	}
	n := float64(rep.Queries)
	rep.GoldTop1, rep.GoldKept = float64(top1)/n, float64(kept)/n
	rep.Present, rep.Absent = distOf(present), distOf(absent)
	rep.Collisions = float64(collisions) / n
	return rep
}

// goldNames returns every tool of q's gold groups, once each.
func goldNames(q Query) []string {
	var out []string
	for _, g := range q.Groups() {
		for _, name := range g {
			if !slices.Contains(out, name) {
				out = append(out, name)
			}
		}
	}
	return out
}

// collide reports whether the router would raise its collision alert
// for a top tool a and runner-up b: different domains, scores within the
// collision delta, and b at or above the noise floor.
func collide(ix *routing.Index, a, b routing.Hit) bool {
	return domainOf(ix, a.Name) != domainOf(ix, b.Name) &&
		a.Score-b.Score < routing.DefaultCollisionDelta && b.Score >= routing.DefaultNoiseFloor
}

func domainOf(ix *routing.Index, name string) string {
	t, _ := ix.Tool(name)
	if t.Domain != "" {
		return t.Domain
	}
	return t.Upstream
}

// distOf summarises scores (which it sorts).
func distOf(scores []float64) ScoreDist {
	d := ScoreDist{N: len(scores)}
	if d.N == 0 {
		return d
	}
	slices.Sort(scores)
	q := func(p float64) float64 { return scores[min(d.N-1, int(p*float64(d.N)))] }
	d.P10, d.P50, d.P90 = q(0.1), q(0.5), q(0.9)
	for _, s := range scores {
		if s >= routing.DefaultNoiseFloor {
			d.AboveFloor++
		}
		if s >= routing.DefaultThreshold {
			d.AboveThr++
		}
	}
	d.AboveFloor /= float64(d.N)
	d.AboveThr /= float64(d.N)
	return d
}

// HoldOutTable formats hold-out reports as an aligned text table, one row
// each: the gold top-1 share and kept share, then for the top tool with
// gold present and with gold removed its score percentiles p10/p50/p90
// and the shares at or above the noise floor (≥fl) and threshold (≥thr),
// and the collision alerts raised with gold removed.
func HoldOutTable(reports ...HoldOutReport) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-12s %7s %5s %5s | %-17s %5s %5s | %-16s %5s %5s %5s\n",
		"set", "queries", "top1", "kept", "present p10/50/90", "≥fl", "≥thr", "absent p10/50/90", "≥fl", "≥thr", "coll")
	for _, r := range reports {
		name := r.Name
		if name == "" {
			name = "-"
		}
		fmt.Fprintf(&b, "%-12s %7d %5.3f %5.3f | %-17s %5.3f %5.3f | %-16s %5.3f %5.3f %5.3f\n",
			name, r.Queries, r.GoldTop1, r.GoldKept,
			r.Present.percentiles(), r.Present.AboveFloor, r.Present.AboveThr,
			r.Absent.percentiles(), r.Absent.AboveFloor, r.Absent.AboveThr, r.Collisions)
	}
	return b.String()
}

func (d ScoreDist) percentiles() string {
	return fmt.Sprintf("%.2f/%.2f/%.2f", d.P10, d.P50, d.P90)
}

// withoutTools runs fn with the tools named taken out of ix (built from
// tools), as if they had never been added, then puts them back.
func withoutTools(ix *routing.Index, tools []routing.Tool, names []string, fn func()) {
	ups := map[string]bool{}
	for _, name := range names {
		if t, ok := ix.Tool(name); ok {
			ups[t.Upstream] = true
		}
	}
	set := func(drop bool) {
		byUpstream := map[string][]routing.Tool{}
		for _, t := range tools {
			if ups[t.Upstream] && !(drop && slices.Contains(names, t.Name)) {
				byUpstream[t.Upstream] = append(byUpstream[t.Upstream], t)
			}
		}
		for up := range ups {
			ix.SetUpstream(up, byUpstream[up])
		}
	}
	set(true)
	fn()
	set(false)
}
