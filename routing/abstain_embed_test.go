package routing

import (
	"testing"

	"github.com/mcp-router/mcp-router/internal/fakeollama"
)

// TestAbstentionChecksRunWithEmbeddings: with embeddings on, the router
// still runs every abstention check, not coverage alone. The fake Ollama
// embeds by hashing words, so what this proves is the wiring and the
// rules (the fused ranking keeps the lexical arm's evidence, and the
// advice check reads it), not a model's quality: requests for advice
// about things no tool knows are abstained on, with the reason in the
// alert, and a request the catalog serves is still routed.
func TestAbstentionChecksRunWithEmbeddings(t *testing.T) {
	places := []Tool{{Name: "places_search", Upstream: "places", Description: "Search for places by name and category, best rated first."}}
	_, e := newOllama(t, fakeollama.Options{}, OllamaOptions{})
	r := seedRouter(t, RouterOptions{Semantic: NewSemanticIndex(SemanticOptions{Embedder: e})})
	r.SetUpstream("places", places)
	tools := seedTools(t)
	tools["places"] = places
	for up, ts := range tools {
		if err := r.Embed(t.Context(), up, ts); err != nil {
			t.Fatalf("embedding %s: %v", up, err)
		}
	}
	for _, q := range []string{
		"what is the best pizza in town for a birthday dinner",
		"what is the best rated bakery in town for a birthday cake",
	} {
		d := r.Route(t.Context(), Request{Query: q})
		if !d.Abstained || d.why != abstainedAdvice {
			t.Errorf("%q: abstained %v (why %d), ranked %v; want an abstention by the advice check", q, d.Abstained, d.why, hitsOf(d.Ranked[:min(3, len(d.Ranked))]))
			continue
		}
		if a := alertOf(d, "no_match"); a == nil {
			t.Errorf("%q: alerts %v, want no_match", q, d.Alerts)
		}
	}
	d := r.Route(t.Context(), Request{Query: "search places by category"})
	if d.Abstained || !containsName(d.Selected, "places_search") {
		t.Errorf("search places by category: abstained %v, selected %v; want places_search", d.Abstained, names(d.Selected))
	}
}
