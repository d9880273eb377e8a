package eval

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcp-router/mcp-router/routing"
	"github.com/mcp-router/mcp-router/routing/lessons"
	"github.com/mcp-router/mcp-router/state"
)

// lessonsSets are the sets the experience memory is measured on, each
// with the number of queries sampled (0 for all) to keep the run short.
var lessonsSets = []struct {
	name   string
	sample int
}{
	{"bfcl", 0},
	{"seal_tools", 0},
	{"metatool", 3000},
}

// lessonsPool is the depth of the ranking the lessons re-rank: the
// router's candidate pool.
const lessonsPool = 50

// lessonsRow is one set's measurement.
type lessonsRow struct {
	name                          string
	queries, missed, taught       int
	lessons                       int
	taughtR5, unseenR5, allR5     [2]float64 // without, with lessons
	restR5                        [2]float64 // every query but the taught ones
	gained, lost                  int        // queries whose R@5 rose, fell
	intruded                      int        // queries into whose top 5 lessons brought a tool not gold
	adjustMean, adjustP50, adjP99 time.Duration
	learnMean                     time.Duration
}

// TestLessonsMeasurement measures the experience memory as a
// routing_feedback user would teach it: of the queries whose first gold
// tool the lexical index ranks below 5, a random half is taught (one
// positive lesson each: the query, its first gold tool); every query is
// then re-ranked with the lessons' adjustments applied to its top 50
// candidates. It reports R@5 on the taught queries (sanity), on the other
// half (similar but unseen), on every query and on every query not taught
// (no harm elsewhere), without and with lessons, and the latency Adjust
// adds to a request. It fails only when lessons lower R@5 on all queries
// by more than 0.005.
func TestLessonsMeasurement(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped under -short")
	}
	var rows []lessonsRow
	for _, set := range lessonsSets {
		t.Run(set.name, func(t *testing.T) {
			ds := loadDataset(t, set.name)
			row := measureLessons(t, set.name, ds, set.sample)
			if row.allR5[1] < row.allR5[0]-0.005 {
				t.Errorf("%s: R@5 on all queries %.3f with lessons, %.3f without: want no worse than 0.005 below",
					set.name, row.allR5[1], row.allR5[0])
			}
			rows = append(rows, row)
		})
	}
	if len(rows) > 0 {
		t.Logf("experience memory: R@5 without → with lessons (taught: half of the queries whose first gold tool ranked below 5):\n%s", lessonsTable(rows))
	}
}

func measureLessons(t *testing.T, name string, ds dataset, sample int) lessonsRow {
	ctx := t.Context()
	rng := rand.New(rand.NewPCG(2024, 5))
	queries := withGold(ds.queries)
	if sample > 0 && len(queries) > sample {
		rng.Shuffle(len(queries), func(i, j int) { queries[i], queries[j] = queries[j], queries[i] })
		queries = queries[:sample]
	}
	ix := BuildIndex(ds.tools, routing.IndexOptions{})
	base := make(map[string][]routing.Hit, len(queries))
	for _, q := range queries {
		base[q.Query] = ix.Search(q.Query, lessonsPool)
	}

	// The queries whose first gold tool ranks below 5, split in halves by
	// text (a text asked twice is in one half), in a seeded random order.
	byText := map[string][]Query{}
	var texts []string
	for _, q := range queries {
		if r := rankOfName(base[q.Query], q.Gold[0]); r == 0 || r > 5 {
			if byText[q.Query] == nil {
				texts = append(texts, q.Query)
			}
			byText[q.Query] = append(byText[q.Query], q)
		}
	}
	rng.Shuffle(len(texts), func(i, j int) { texts[i], texts[j] = texts[j], texts[i] })
	var taught, unseen []Query
	for i, text := range texts {
		if i%2 == 0 {
			taught = append(taught, byText[text]...)
		} else {
			unseen = append(unseen, byText[text]...)
		}
	}

	db, err := state.Open(ctx, state.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	now := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	mem, err := lessons.NewMemory(ctx, db.Lessons(), lessons.MemoryOptions{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	for _, q := range taught {
		if _, err := mem.Learn(ctx, lessons.Lesson{Query: q.Query, Tool: q.Gold[0], Polarity: lessons.Use, Source: lessons.SourceFeedback}); err != nil {
			t.Fatal(err)
		}
	}
	row := lessonsRow{name: name, queries: len(queries), missed: len(taught) + len(unseen), taught: len(taught), lessons: mem.Len()}
	row.learnMean = time.Since(start) / time.Duration(max(1, len(taught)))

	without, with := hitRanker{}, hitRanker{}
	lat := make([]time.Duration, 0, len(base))
	for text, hits := range base {
		t0 := time.Now()
		adj := mem.AdjustFor(ctx, "", text)
		lat = append(lat, time.Since(t0))
		without[text], with[text] = hits, lessons.Apply(hits, adj)
	}
	var sum time.Duration
	for _, d := range lat {
		sum += d
	}
	row.adjustMean = sum / time.Duration(len(lat))
	row.adjustP50, row.adjP99 = percentile(lat, 0.5), percentile(lat, 0.99)

	r5 := func(qs []Query) [2]float64 {
		a, _ := Run(without, qs, Options{})
		b, _ := Run(with, qs, Options{})
		return [2]float64{a.R5, b.R5}
	}
	isTaught := map[string]bool{}
	for _, q := range taught {
		isTaught[q.Query] = true
	}
	var rest []Query
	for _, q := range queries {
		if !isTaught[q.Query] {
			rest = append(rest, q)
		}
		if intrudes(without[q.Query], with[q.Query], q) {
			row.intruded++
		}
		a, b := recallAt5(without, q), recallAt5(with, q)
		switch {
		case b > a:
			row.gained++
		case b < a:
			row.lost++
		}
	}
	row.taughtR5, row.unseenR5, row.allR5, row.restR5 = r5(taught), r5(unseen), r5(queries), r5(rest)
	return row
}

// withGold returns the queries that have a gold tool.
func withGold(qs []Query) []Query {
	var out []Query
	for _, q := range qs {
		if len(q.Gold) > 0 {
			out = append(out, q)
		}
	}
	return out
}

// rankOfName returns the 1-based rank of name in hits, 0 when absent.
func rankOfName(hits []routing.Hit, name string) int {
	return slices.IndexFunc(hits, func(h routing.Hit) bool { return h.Name == name }) + 1
}

// intrudes reports whether after has a tool in its top 5 that before
// had not, and that is none of q's gold tools.
func intrudes(before, after []routing.Hit, q Query) bool {
	top := before[:min(5, len(before))]
	for _, h := range after[:min(5, len(after))] {
		if rankOfName(top, h.Name) == 0 && !isGold(q, h.Name) {
			return true
		}
	}
	return false
}

func isGold(q Query, name string) bool {
	for _, g := range q.Groups() {
		if slices.Contains(g, name) {
			return true
		}
	}
	return slices.Contains(q.Gold, name)
}

// recallAt5 is q's R@5 under r.
func recallAt5(r hitRanker, q Query) float64 {
	rep, _ := Run(r, []Query{q}, Options{})
	return rep.R5
}

// hitRanker answers Rank from rankings computed beforehand, by query text.
type hitRanker map[string][]routing.Hit

func (r hitRanker) Rank(query string, k int) []string {
	hits := r[query]
	names := make([]string, 0, min(k, len(hits)))
	for _, h := range hits[:min(k, len(hits))] {
		names = append(names, h.Name)
	}
	return names
}

func lessonsTable(rows []lessonsRow) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-11s %7s %7s %7s %13s %13s %13s %13s %6s %5s %8s %9s %9s %9s %9s\n",
		"set", "queries", "missed", "taught", "R@5 taught", "R@5 unseen", "R@5 all", "R@5 rest", "gained", "lost", "intruded",
		"adj mean", "adj p50", "adj p99", "learn")
	pair := func(p [2]float64) string { return fmt.Sprintf("%.3f→%.3f", p[0], p[1]) }
	for _, r := range rows {
		fmt.Fprintf(&b, "%-11s %7d %7d %7d %13s %13s %13s %13s %6d %5d %8d %9s %9s %9s %9s\n",
			r.name, r.queries, r.missed, r.taught, pair(r.taughtR5), pair(r.unseenR5), pair(r.allR5), pair(r.restR5),
			r.gained, r.lost, r.intruded, r.adjustMean.Round(100*time.Nanosecond), r.adjustP50.Round(100*time.Nanosecond),
			r.adjP99.Round(100*time.Nanosecond), r.learnMean.Round(10*time.Microsecond))
	}
	return b.String()
}
