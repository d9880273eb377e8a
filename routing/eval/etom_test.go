package eval

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcp-router/mcp-router/routing"
)

// Abstention goals on etom: the share of requests no tool serves that the
// router abstains on (reached 0.857), and the share of answerable ones it
// wrongly abstains on (reached 0.030).
const (
	minInfeasibleAbstained = 0.80
	maxAnswerableAbstained = 0.05
)

// loadInfeasible loads etom's requests that no tool of its catalog
// serves, skipping tb when they are absent.
func loadInfeasible(tb testing.TB) []Query {
	tb.Helper()
	dir := benchDir(tb)
	if dir == "" {
		tb.Skip("benchmark data absent")
	}
	f, err := os.Open(filepath.Join(dir, "etom", "infeasible.jsonl"))
	if err != nil {
		tb.Skipf("etom infeasible requests absent: %v", err)
	}
	defer f.Close()
	qs, err := LoadQueries(f)
	if err != nil {
		tb.Fatalf("etom infeasible.jsonl: %v", err)
	}
	return qs
}

// TestBenchEtom measures the lexical index on etom, per level, and the
// router's abstention on etom's infeasible requests against its
// answerable ones.
func TestBenchEtom(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped under -short")
	}
	ds := loadDataset(t, "etom")
	infeasible := loadInfeasible(t)
	ix := BuildIndex(ds.tools, routing.IndexOptions{})
	reports := []Report{}
	all, _ := Run(IndexRanker{Index: ix}, ds.queries, Options{})
	all.Name = "etom"
	reports = append(reports, all)
	for level := 1; level <= 4; level++ {
		qs := slices.DeleteFunc(slices.Clone(ds.queries), func(q Query) bool { return int(q.Level) != level })
		rep, _ := Run(IndexRanker{Index: ix}, qs, Options{})
		rep.Name = fmt.Sprintf("etom L%d", level)
		reports = append(reports, rep)
	}
	t.Logf("lexical index on etom:\n%s", Table(reports...))

	r := routing.NewRouter(routing.RouterOptions{Lexical: ix})
	byUp := map[string][]routing.Tool{}
	for _, tl := range ds.tools {
		byUp[tl.Upstream] = append(byUp[tl.Upstream], tl)
	}
	for up, tools := range byUp {
		r.SetUpstream(up, tools) // the index already holds them: same texts, same scores
	}
	ctx := context.Background()
	abstained := func(qs []Query, show bool) (float64, []string) {
		n := 0
		var odd []string
		for _, q := range qs {
			d := r.Route(ctx, routing.Request{Query: q.Query})
			if d.Abstained {
				n++
			}
			if d.Abstained == show && len(odd) < 15 {
				top := ""
				if len(d.Ranked) > 0 {
					top = fmt.Sprintf("%s %.2f", d.Ranked[0].Name, d.Ranked[0].Score)
				}
				odd = append(odd, fmt.Sprintf("%q -> %s", q.Query, top))
			}
		}
		return float64(n) / float64(max(1, len(qs))), odd
	}
	inf, missed := abstained(infeasible, false)
	ans, wrong := abstained(ds.queries, true)
	t.Logf("etom abstention: infeasible abstained %.3f (%d), answerable abstained %.3f (%d)", inf, len(infeasible), ans, len(ds.queries))
	t.Logf("infeasible routed anyway (first 15):\n%s", strings.Join(missed, "\n"))
	t.Logf("answerable abstained on (first 15):\n%s", strings.Join(wrong, "\n"))
	if inf < minInfeasibleAbstained {
		t.Errorf("infeasible abstained %.3f, want at least %.3f", inf, minInfeasibleAbstained)
	}
	if ans > maxAnswerableAbstained {
		t.Errorf("answerable abstained %.3f, want at most %.3f", ans, maxAnswerableAbstained)
	}
}
