package eval

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/mcp-router/mcp-router/routing"
)

// learnExamples pairs each request of the named shared sets with its gold
// tools, as the generator of learned.txt does.
func learnExamples(tb testing.TB, names ...string) []learnExample {
	var out []learnExample
	for _, name := range names {
		ds := loadDataset(tb, name)
		qs := make([]string, len(ds.queries))
		gold := make([][]string, len(ds.queries))
		for i, q := range ds.queries {
			qs[i], gold[i] = q.Query, slices.Concat(q.Groups()...)
		}
		out = append(out, learnExamplesOf(ds.tools, qs, gold)...)
	}
	return out
}

// heldOut is one direction of TestLearnedHeldOut: a table learned from
// the train sets, judged on sets none of them is.
type heldOut struct {
	train []string
	judge []string // ablationSets names
}

var heldOuts = []heldOut{
	{[]string{"metatool", "bfcl", "seal_tools"}, []string{"etom L1-3", "etom L4", "etom infeasible"}},
	{[]string{"etom"}, []string{"metatool", "metatool all"}},
	{[]string{"etom", "bfcl", "seal_tools"}, []string{"metatool", "metatool all"}},
	{[]string{"metatool", "etom", "seal_tools"}, []string{"bfcl", "bfcl cjk"}},
	{[]string{"metatool", "etom", "bfcl"}, []string{"seal_tools"}},
}

// TestLearnedHeldOut measures the learned table on data it was not
// learned from: for each direction, a table is learned from the train
// sets (learnTable, learn_test.go) and the router is run on the judged
// sets without a learned table and with it:
//
//	go test -run TestLearnedHeldOut -v ./routing/eval/
func TestLearnedHeldOut(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("a measurement: skipped under -short and the race detector")
	}
	sets := ablationSets(t)
	meta := loadDataset(t, "metatool")
	sets = append(sets, ablationSet{"metatool all", meta.tools, meta.queries})
	var b strings.Builder
	fmt.Fprintf(&b, "%-32s %-22s %6s %6s %6s %6s %6s   %s\n", "trained on (entries)", "judged on (n)", "R@1", "R@5", "C@5", "belt", "abst", "(without the table)")
	for _, h := range heldOuts {
		learned := learnTable(learnExamples(t, h.train...), learnOptions{})
		for _, s := range sets {
			if !slices.Contains(h.judge, s.name) {
				continue
			}
			off := ablate(ablation{}, s)
			on := ablate(ablation{index: routing.IndexOptions{Learned: learned}}, s)
			fmt.Fprintf(&b, "%-32s %-22s %6.3f %6.3f %6.3f %6.3f %6.3f   %.3f %.3f %.3f %.3f %.3f\n",
				fmt.Sprintf("%s (%d)", strings.Join(h.train, "+"), len(learned)), fmt.Sprintf("%s (%d)", s.name, len(s.queries)),
				on.r1, on.r5, on.c5, on.belt, on.abst, off.r1, off.r5, off.c5, off.belt, off.abst)
		}
	}
	t.Logf("a table learned from some sets, judged on others:\n%s", b.String())
}
