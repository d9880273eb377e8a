package eval

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mcp-router/mcp-router/routing"
)

// ablation is one configuration of TestAblation: the defaults with one
// signal or heuristic turned off.
type ablation struct {
	name   string
	index  routing.IndexOptions
	router routing.RouterOptions
}

// ablations are the defaults, then each signal and heuristic off in turn.
var ablations = []ablation{
	{name: "defaults"},
	{name: "-values", index: routing.IndexOptions{Off: routing.OffValues}},
	{name: "-operators", index: routing.IndexOptions{Off: routing.OffOperators}},
	{name: "-derived", index: routing.IndexOptions{Off: routing.OffDerived}},
	{name: "-translations", index: routing.IndexOptions{Off: routing.OffTranslations}},
	{name: "-nouns", index: routing.IndexOptions{Off: routing.OffNouns}},
	{name: "-named", index: routing.IndexOptions{Off: routing.OffNamed}},
	{name: "-synonyms", index: routing.IndexOptions{SynonymWeight: -1}},
	{name: "-bigrams", index: routing.IndexOptions{BigramWeight: -1}},
	{name: "-diversify", index: routing.IndexOptions{Diversity: -1}},
	{name: "-stemming", index: routing.IndexOptions{Tokenizer: routing.TokenizerOptions{NoStem: true}}},
	{name: "-commitment", router: routing.RouterOptions{AbstainCommitment: -1}},
	{name: "-advice", router: routing.RouterOptions{AbstainAdvice: -1}},
	{name: "-keepcoverage", router: routing.RouterOptions{KeepCoverage: -1}},
	{name: "-abstention", router: routing.RouterOptions{AbstainCoverage: -1}},
}

// sweeps are each tuned constant of the options at half and twice its
// default (a value past 1 where 1 is the bound is left out), after the
// ablations, so that the table says whether the default is where the
// figures peak.
var sweeps = func() []ablation {
	var out []ablation
	w := func(name string, def float64, set func(o *routing.IndexOptions, v float64)) {
		for _, v := range []float64{def / 2, def * 2} {
			if strings.HasPrefix(name, "b.") {
				v = min(v, 1) // a length normalisation is in [0, 1]
			}
			a := ablation{name: fmt.Sprintf("%s=%g", name, v)}
			set(&a.index, v)
			out = append(out, a)
		}
	}
	r := func(name string, def float64, set func(o *routing.RouterOptions, v float64)) {
		for _, v := range []float64{def / 2, def * 2} {
			a := ablation{name: fmt.Sprintf("%s=%g", name, v)}
			set(&a.router, v)
			out = append(out, a)
		}
	}
	w("w.name", 3, func(o *routing.IndexOptions, v float64) { o.Weights.Name = v })
	w("w.desc", 1, func(o *routing.IndexOptions, v float64) { o.Weights.Description = v })
	w("w.params", 1, func(o *routing.IndexOptions, v float64) { o.Weights.ParamNames = v })
	w("w.paramdesc", 0.5, func(o *routing.IndexOptions, v float64) { o.Weights.ParamDescriptions = v })
	w("w.domain", 1, func(o *routing.IndexOptions, v float64) { o.Weights.Domain = v })
	w("b.name", 0.5, func(o *routing.IndexOptions, v float64) { o.B.Name = v })
	w("b.desc", 0.75, func(o *routing.IndexOptions, v float64) { o.B.Description = v })
	w("b.params", 0.5, func(o *routing.IndexOptions, v float64) { o.B.ParamNames = v })
	w("b.paramdesc", 0.4, func(o *routing.IndexOptions, v float64) { o.B.ParamDescriptions = v })
	w("b.domain", 0.5, func(o *routing.IndexOptions, v float64) { o.B.Domain = v })
	w("k1", 1.2, func(o *routing.IndexOptions, v float64) { o.K1 = v })
	w("synonyms", 0.3, func(o *routing.IndexOptions, v float64) { o.SynonymWeight = v })
	w("bigrams", 0.4, func(o *routing.IndexOptions, v float64) { o.BigramWeight = v })
	w("diversity", 0.5, func(o *routing.IndexOptions, v float64) { o.Diversity = min(v, 1) })
	r("keep_coverage", routing.DefaultKeepCoverage, func(o *routing.RouterOptions, v float64) { o.KeepCoverage = v })
	r("abstain_coverage", routing.DefaultAbstainCoverage, func(o *routing.RouterOptions, v float64) { o.AbstainCoverage = v })
	r("abstain_commitment", routing.DefaultAbstainCommitment, func(o *routing.RouterOptions, v float64) { o.AbstainCommitment = v })
	r("abstain_advice", routing.DefaultAbstainAdvice, func(o *routing.RouterOptions, v float64) { o.AbstainAdvice = v })
	return out
}()

// ablationSample is about how many requests of each large set
// TestAblation routes, evenly spaced (as TestBenchBelt samples); etom's
// level-4 and infeasible requests are routed in full (103 and 91), and so
// are bfcl's requests in Chinese, Japanese or Korean (20).
const ablationSample = 600

// ablationSet is one set of requests over one catalog.
type ablationSet struct {
	name    string
	tools   []routing.Tool
	queries []Query
}

// ablationRow is one configuration's figures on one set: R@1, R@5 and
// C@5 of the ranking, R@5 of what one discovery hands over (the belt),
// and the share of requests abstained on.
type ablationRow struct {
	r1, r5, c5, belt, abst float64
}

// TestAblation turns each signal and heuristic off in turn, then sets
// each tuned constant to half and twice its default, and prints
// what the router then reaches on every shared set, so that each one's
// worth is a figure anyone can rerun:
//
//	go test -run TestAblation -v ./routing/eval/
//
// ABLATION_ONLY=defaults (a comma-separated list of configuration
// names) prints only those rows, for a quick comparison of two trees.
func TestAblation(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("a measurement: skipped under -short and the race detector")
	}
	sets := ablationSets(t)
	configs := slices.Concat(ablations, sweeps)
	if only := os.Getenv("ABLATION_ONLY"); only != "" {
		names := strings.Split(only, ",")
		configs = slices.DeleteFunc(configs, func(a ablation) bool { return !slices.Contains(names, a.name) })
	}
	rows := make([][]ablationRow, len(configs))
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for i, a := range configs {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			rows[i] = make([]ablationRow, len(sets))
			for j, s := range sets {
				rows[i][j] = ablate(a, s)
			}
		})
	}
	wg.Wait()
	t.Logf("each signal and heuristic off in turn (R@1/R@5/C@5 of the ranking, belt: R@5 of what one discovery hands over, abst: share abstained on; Δ against the defaults):\n%s", ablationTable(configs, sets, rows))
}

// ablationSets loads every shared set, sampled.
func ablationSets(t *testing.T) []ablationSet {
	var sets []ablationSet
	meta := loadDataset(t, "metatool")
	sets = append(sets, ablationSet{"metatool", meta.tools, sample(meta.queries, ablationSample)})
	etom := loadDataset(t, "etom")
	below4 := slices.DeleteFunc(slices.Clone(etom.queries), func(q Query) bool { return q.Level >= 4 })
	level4 := slices.DeleteFunc(slices.Clone(etom.queries), func(q Query) bool { return q.Level != 4 })
	sets = append(sets,
		ablationSet{"etom L1-3", etom.tools, sample(below4, ablationSample)},
		ablationSet{"etom L4", etom.tools, level4},
		ablationSet{"etom infeasible", etom.tools, loadInfeasible(t)})
	for _, name := range []string{"bfcl", "seal_tools"} {
		ds := loadDataset(t, name)
		sets = append(sets, ablationSet{name, ds.tools, sample(ds.queries, ablationSample)})
		if name == "bfcl" {
			// People's requests in Chinese, Japanese or Korean, all 20.
			cjk := slices.DeleteFunc(slices.Clone(ds.queries), func(q Query) bool { return cjkShare(q.Query) == 0 })
			sets = append(sets, ablationSet{"bfcl cjk", ds.tools, cjk})
		}
	}
	return sets
}

// ablate routes each request of s once through a router configured by a.
func ablate(a ablation, s ablationSet) ablationRow {
	opts := a.router
	opts.Lexical = routing.NewIndex(a.index)
	r := RouterOver(s.tools, opts)
	var sum ablationRow
	scored := 0
	for _, q := range s.queries {
		d := r.Route(context.Background(), routing.Request{Query: q.Query})
		if d.Abstained {
			sum.abst++
		}
		groups := q.Groups()
		if len(groups) == 0 {
			continue
		}
		scored++
		m := score(groupRanks(groups, candidateNames(d.Ranked)))
		sum.r1 += m[0] // R@1, R@5 and C@5 (see metrics)
		sum.r5 += m[1]
		sum.c5 += m[4]
		sum.belt += score(groupRanks(groups, candidateNames(d.Selected)))[1]
	}
	n, g := float64(max(1, len(s.queries))), float64(max(1, scored))
	return ablationRow{r1: sum.r1 / g, r5: sum.r5 / g, c5: sum.c5 / g, belt: sum.belt / g, abst: sum.abst / n}
}

func candidateNames(cs []routing.Candidate) []string {
	names := make([]string, len(cs))
	for i, c := range cs {
		names[i] = c.Name
	}
	return names
}

// ablationTable prints one line per configuration and set.
func ablationTable(configs []ablation, sets []ablationSet, rows [][]ablationRow) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-14s %-16s %6s %6s %6s %6s %6s %7s %7s %7s\n", "config", "set (n)", "R@1", "R@5", "C@5", "belt", "abst", "ΔR@5", "ΔC@5", "Δabst")
	for i, a := range configs {
		for j, s := range sets {
			x, base := rows[i][j], rows[0][j]
			fmt.Fprintf(&b, "%-14s %-16s %6.3f %6.3f %6.3f %6.3f %6.3f %+7.3f %+7.3f %+7.3f\n", a.name,
				fmt.Sprintf("%s (%d)", s.name, len(s.queries)), x.r1, x.r5, x.c5, x.belt, x.abst, x.r5-base.r5, x.c5-base.c5, x.abst-base.abst)
		}
	}
	return b.String()
}
