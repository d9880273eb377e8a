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
