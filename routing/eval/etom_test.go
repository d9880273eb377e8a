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

// Abstention at the router's default: the share of etom's requests that
// no tool serves that it abstains on (reached 0.484, 44 of 91, with the
// advice check, routing/advice.go; 0.308 without it, with the commitment
// check, routing/commitment.go, and 0.242 before request words were
// weighed by how much they are nouns; 0.110 on coverage alone, once
// typo correction stopped reaching words past its edit limit; 0.121
// before upstreams were scored too, which reorders the top few tools and
// so changes whose coverage is read), and the share of answerable ones
// it wrongly abstains on, on etom (reached 0.004; 0.000 on coverage
// alone), on metatool's requests as people write them (reached 0.056;
// 0.036 without the advice check, 0.019 on coverage alone, 0.014 with
// abstention off) and on those among etom's tools (reached 0.079; 0.075
// without the advice check, 0.008 on coverage alone).
const (
	minInfeasibleAbstained = 0.40
	maxAnswerableAbstained = 0.01
	maxMetatoolAbstained   = 0.09
	maxMetaEtomAbstained   = 0.10
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

// TestBenchEtom measures the lexical index on etom, per level.
func TestBenchEtom(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped under -short")
	}
	ds := loadDataset(t, "etom")
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
	t.Log(clauseCeiling(ix, slices.DeleteFunc(slices.Clone(ds.queries), func(q Query) bool { return q.Level != 4 })))
}

// clauseCeiling says how well each clause of multi-intent requests is
// ranked on its own, which bounds what diversifying the whole request's
// ranking can reach: the share of gold groups that are some clause's top
// tool or in some clause's top 5, and the share of requests whose every
// gold group is some clause's top tool (at most 5 groups), the C@5 that
// handing over each clause's top tool would reach.
func clauseCeiling(ix *routing.Index, qs []Query) string {
	var groups, top1, top5, whole int
	for _, q := range qs {
		best := make([]int, len(q.Groups())) // each group's best rank in a clause
		for i := range best {
			best[i] = 1 << 30
		}
		for _, c := range routing.Clauses(q.Query) {
			ranked := ix.Search(c, 5)
			for i, g := range q.Groups() {
				for r, h := range ranked {
					if slices.Contains(g, h.Name) {
						best[i] = min(best[i], r+1)
					}
				}
			}
		}
		all := len(best) <= 5
		for _, r := range best {
			groups++
			if r == 1 {
				top1++
			} else {
				all = false
			}
			if r <= 5 {
				top5++
			}
		}
		if all {
			whole++
		}
	}
	return fmt.Sprintf("clauses of %d multi-intent requests ranked alone: %.3f of %d gold groups are a clause's top tool, %.3f in a clause's top 5; "+
		"every group a clause's top tool in %.3f of the requests (the C@5 of handing over each clause's top tool)",
		len(qs), float64(top1)/float64(max(1, groups)), groups, float64(top5)/float64(max(1, groups)), float64(whole)/float64(max(1, len(qs))))
}

// abstainRate routes queries through a router over tools with opts, and
// returns the share abstained on and the share
// abstained on whose gold tool was in the top 5 (lost by abstaining).
func abstainRate(tools []routing.Tool, queries []Query, opts routing.RouterOptions) (rate, lost float64) {
	r := routing.NewRouter(opts)
	byUp := map[string][]routing.Tool{}
	for _, tl := range tools {
		byUp[tl.Upstream] = append(byUp[tl.Upstream], tl)
	}
	for up, ts := range byUp {
		r.SetUpstream(up, ts)
	}
	var n, l int
	for _, q := range queries {
		d := r.Route(context.Background(), routing.Request{Query: q.Query})
		if !d.Abstained {
			continue
		}
		n++
		groups := q.Groups()
		if slices.ContainsFunc(d.Ranked[:min(5, len(d.Ranked))], func(c routing.Candidate) bool {
			return slices.ContainsFunc(groups, func(g []string) bool { return slices.Contains(g, c.Name) })
		}) {
			l++
		}
	}
	return float64(n) / float64(max(1, len(queries))), float64(l) / float64(max(1, len(queries)))
}

// sweep returns the bounds a table of TestBenchAbstention reads: all of
// xs, or under the race detector, which slows routing tenfold, only the
// default, which its checks need.
func sweep(xs []float64, def float64) []float64 {
	if raceEnabled {
		return []float64{def}
	}
	return xs
}

// TestBenchAbstention measures the router's abstention on etom's requests
// that no tool serves against answerable ones (etom's, generated from the
// tool descriptions; bfcl's and seal_tools'; and metatool's, written as
// people write), at the default and across thresholds.
func TestBenchAbstention(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped under -short")
	}
	etom := loadDataset(t, "etom")
	infeasible := loadInfeasible(t)
	type set struct {
		name    string
		tools   []routing.Tool
		queries []Query
	}
	sets := []set{{"etom infeasible", etom.tools, infeasible}, {"etom", etom.tools, etom.queries}}
	for _, name := range []string{"bfcl", "seal_tools", "metatool"} {
		ds := loadDataset(t, name)
		sets = append(sets, set{name, ds.tools, ds.queries})
	}
	// People's requests to chat plugins in a large catalog: metatool's
	// tools among etom's, so that what the catalog's size does to
	// abstention shows on requests written by people.
	meta := sets[len(sets)-1]
	sets = append(sets, set{"metatool+etom", slices.Concat(meta.tools, etom.tools), meta.queries})
	// table logs the share abstained on each set across bounds of one
	// check (opts gives the router's options at a bound) and returns the
	// shares at the bound def, the table's default column.
	table := func(title, key, format string, bounds []float64, def float64, opts func(float64) routing.RouterOptions) map[string]float64 {
		var b strings.Builder
		fmt.Fprintf(&b, "%-16s", key)
		for _, bd := range bounds {
			fmt.Fprintf(&b, " "+format, max(bd, 0))
		}
		b.WriteString("   (share abstained / of which the gold tool was in the top 5)\n")
		at := map[string]float64{}
		for _, s := range sets {
			fmt.Fprintf(&b, "%-16s", s.name)
			for _, bd := range bounds {
				rate, lost := abstainRate(s.tools, s.queries, opts(bd))
				fmt.Fprintf(&b, " %6.3f/%6.3f", rate, lost)
				if bd == def {
					at[s.name] = rate
				}
			}
			b.WriteString("\n")
		}
		t.Logf("%s:\n%s", title, b.String())
		return at
	}
	table("router abstention on coverage alone", "abstain_coverage", "%13.2f",
		sweep([]float64{-1, routing.DefaultAbstainCoverage, 0.15, 0.2, 0.25, 0.35}, routing.DefaultAbstainCoverage), routing.DefaultAbstainCoverage,
		func(x float64) routing.RouterOptions {
			return routing.RouterOptions{AbstainCoverage: x, AbstainCommitment: -1, AbstainAdvice: -1}
		})
	// The commitment check (routing/commitment.go) at the default
	// coverage, across its bounds.
	table(fmt.Sprintf("router abstention with the commitment check, coverage at %.2f, the advice check off", routing.DefaultAbstainCoverage),
		"abstain_commit", "%13.4f",
		sweep([]float64{-1, 0.001, routing.DefaultAbstainCommitment, 0.003, 0.004, 0.006, 0.01}, routing.DefaultAbstainCommitment), routing.DefaultAbstainCommitment,
		func(x float64) routing.RouterOptions {
			return routing.RouterOptions{AbstainCommitment: x, AbstainAdvice: -1}
		})
	// The advice check (routing/advice.go) at the default coverage and
	// commitment, across its coverage bounds: the defaults are its
	// column at DefaultAbstainAdvice.
	at := table("router abstention at the defaults, across the advice check's bound", "abstain_advice", "%13.2f",
		sweep([]float64{-1, 0.3, 0.5, 0.7, routing.DefaultAbstainAdvice}, routing.DefaultAbstainAdvice), routing.DefaultAbstainAdvice,
		func(x float64) routing.RouterOptions { return routing.RouterOptions{AbstainAdvice: x} })
	if got := at["etom infeasible"]; got < minInfeasibleAbstained {
		t.Errorf("etom infeasible abstained %.3f, want at least %.3f", got, minInfeasibleAbstained)
	}
	if got := at["etom"]; got > maxAnswerableAbstained {
		t.Errorf("etom answerable abstained %.3f, want at most %.3f", got, maxAnswerableAbstained)
	}
	if got := at["metatool"]; got > maxMetatoolAbstained {
		t.Errorf("metatool abstained %.3f, want at most %.3f", got, maxMetatoolAbstained)
	}
	if got := at["metatool+etom"]; got > maxMetaEtomAbstained {
		t.Errorf("metatool+etom abstained %.3f, want at most %.3f", got, maxMetaEtomAbstained)
	}
}
