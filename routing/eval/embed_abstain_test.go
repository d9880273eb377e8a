package eval

import (
	"context"
	"testing"

	"github.com/mcp-router/mcp-router/internal/fakeollama"
	"github.com/mcp-router/mcp-router/routing"
)

// TestBenchAbstentionWithEmbeddings routes etom's requests that no tool
// serves, and a sample of its answerable ones, with an embedder set: a
// fake Ollama that embeds by hashing words. It proves the wiring and the
// abstention rules with embeddings on (every check runs, over each arm's
// top N), not a model's quality: the share of infeasible requests
// abstained on must stay at the lexical router's bound
// (minInfeasibleAbstained), where it fell to coverage alone (0.12)
// while embeddings switched the other checks off.
func TestBenchAbstentionWithEmbeddings(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped under -short")
	}
	etom := loadDataset(t, "etom")
	infeasible := loadInfeasible(t)
	srv := fakeollama.New(fakeollama.Options{})
	defer srv.Close()
	emb, err := routing.NewOllamaEmbedder(routing.OllamaOptions{URL: srv.URL(), HTTPClient: srv.Client(), Model: "nomic-embed-text"})
	if err != nil {
		t.Fatal(err)
	}
	r := RouterOver(etom.tools, routing.RouterOptions{Semantic: routing.NewSemanticIndex(routing.SemanticOptions{Embedder: emb})})
	byUp := map[string][]routing.Tool{}
	for _, tl := range etom.tools {
		byUp[tl.Upstream] = append(byUp[tl.Upstream], tl)
	}
	for up, ts := range byUp {
		if err := r.Embed(context.Background(), up, ts); err != nil {
			t.Fatalf("embedding %s: %v", up, err)
		}
	}
	share := func(qs []Query) float64 {
		n := 0
		for _, q := range qs {
			if r.Route(context.Background(), routing.Request{Query: q.Query}).Abstained {
				n++
			}
		}
		return float64(n) / float64(max(1, len(qs)))
	}
	answerable := sample(etom.queries, ablationSample)
	inf, ans := share(infeasible), share(answerable)
	t.Logf("with embeddings (fake): etom infeasible abstained %.3f of %d, answerable %.3f of %d", inf, len(infeasible), ans, len(answerable))
	if inf < minInfeasibleAbstained {
		t.Errorf("etom infeasible abstained %.3f with embeddings, want at least %.3f", inf, minInfeasibleAbstained)
	}
	if ans > maxAnswerableAbstained {
		t.Errorf("etom answerable abstained %.3f with embeddings, want at most %.3f", ans, maxAnswerableAbstained)
	}
}
