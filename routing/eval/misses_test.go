package eval

import (
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/mcp-router/mcp-router/routing"
)

// TestMissesDiagnostic logs, for a sample of a set's single-tool requests
// whose gold tool the index does not rank first, the request, the gold
// tool and its rank, and the top three tools, each with the request's
// words it shares (as stems). It is a diagnostic for reading misses, not
// a check: it runs only when ROUTING_MISSES names a set
// (ROUTING_MISSES=metatool go test -run TestMissesDiagnostic -v ./routing/eval/).
func TestMissesDiagnostic(t *testing.T) {
	set := os.Getenv("ROUTING_MISSES")
	if set == "" {
		t.Skip("set ROUTING_MISSES to a benchmark set's name")
	}
	const sample = 60
	ds := loadDataset(t, set)
	ix := BuildIndex(ds.tools, routing.IndexOptions{})
	desc := make(map[string]string, len(ds.tools))
	for _, tl := range ds.tools {
		desc[tl.Name] = tl.Description
	}
	tok := routing.NewTokenizer(routing.TokenizerOptions{})
	shared := func(query, tool string) string {
		doc := tok.Tokens(tool + " " + desc[tool])
		var out []string
		for _, w := range tok.Tokens(query) {
			if slices.Contains(doc, w) && !slices.Contains(out, w) {
				out = append(out, w)
			}
		}
		return strings.Join(out, ",")
	}
	var misses []Query
	for _, q := range ds.queries {
		if len(q.Gold) != 1 || len(q.GoldGroups) > 0 {
			continue
		}
		if hits := ix.Search(q.Query, 1); len(hits) == 0 || hits[0].Name != q.Gold[0] {
			misses = append(misses, q)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	rng.Shuffle(len(misses), func(i, j int) { misses[i], misses[j] = misses[j], misses[i] })
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d single-tool requests missed at rank 1; a sample:\n", set, len(misses))
	for _, q := range misses[:min(sample, len(misses))] {
		hits := ix.Search(q.Query, 50)
		rank := slices.IndexFunc(hits, func(h routing.Hit) bool { return h.Name == q.Gold[0] }) + 1
		fmt.Fprintf(&b, "\nQ: %s\n  gold (rank %d, 0 = unranked) %s: %s [%s]\n", q.Query, rank, q.Gold[0], desc[q.Gold[0]], shared(q.Query, q.Gold[0]))
		for _, h := range hits[:min(3, len(hits))] {
			fmt.Fprintf(&b, "  %.2f %s: %.90s [%s]\n", h.Score, h.Name, desc[h.Name], shared(q.Query, h.Name))
		}
	}
	t.Log(b.String())
}

// TestGoldRanksDiagnostic tells where a set's gold tools rank, to say
// which misses a reranking could reach: for each gold group, its rank in
// the ranking of the whole request (5 or better, 6 to 10, 11 to 50,
// further, or unranked: it shares no word with the request) against its
// best rank there or in the ranking of one of the request's clauses on
// its own (first, second or third, fourth to tenth, further). A group
// first in a clause but not in the top 5 is lost in diversify; one
// unranked is out of any lexical ranking's reach. Like
// TestMissesDiagnostic it runs only when asked, with a set and, for
// etom, a level:
// ROUTING_RANKS=etom:4 go test -run TestGoldRanksDiagnostic -v ./routing/eval/
func TestGoldRanksDiagnostic(t *testing.T) {
	set, level, _ := strings.Cut(os.Getenv("ROUTING_RANKS"), ":")
	if set == "" {
		t.Skip("set ROUTING_RANKS to a benchmark set's name, and :level for etom")
	}
	ds := loadDataset(t, set)
	ix := BuildIndex(ds.tools, routing.IndexOptions{})
	ranked := func(q string) []string {
		var names []string
		for _, h := range ix.Search(q, 0) {
			names = append(names, h.Name)
		}
		return names
	}
	wholeRows := []string{"1-5", "6-10", "11-50", ">50", "unranked"}
	clauseCols := []string{"1", "2-3", "4-10", ">10/none"}
	var counts [5][4]int
	for _, q := range ds.queries {
		if level != "" && fmt.Sprint(q.Level) != level || len(q.Groups()) == 0 {
			continue
		}
		whole := groupRanks(q.Groups(), ranked(q.Query))
		best := slices.Clone(whole)
		for _, c := range routing.Clauses(q.Query) {
			for i, r := range groupRanks(q.Groups(), ranked(c)) {
				if r > 0 && (best[i] == 0 || r < best[i]) {
					best[i] = r
				}
			}
		}
		for i, r := range whole {
			row, col := rankBucket(r, 5, 10, 50), rankBucket(best[i], 1, 3, 10)
			if r == 0 {
				row = 4 // unranked, past >50
			}
			counts[row][col]++
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s: gold groups by rank for the whole request (rows) and best rank in a clause (columns)\n%-9s", set, level, "")
	for _, c := range clauseCols {
		fmt.Fprintf(&b, " %9s", c)
	}
	for i, r := range wholeRows {
		fmt.Fprintf(&b, "\n%-9s", r)
		for _, n := range counts[i] {
			fmt.Fprintf(&b, " %9d", n)
		}
	}
	t.Log(b.String())
}

// rankBucket returns the index of the first bound a rank is within, or
// len(bounds) for a rank past them all or 0 (unranked).
func rankBucket(r int, bounds ...int) int {
	for i, b := range bounds {
		if r > 0 && r <= b {
			return i
		}
	}
	return len(bounds)
}
