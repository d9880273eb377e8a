package routing

import (
	"fmt"
	"testing"
)

// assocCatalog has a code host whose tools speak of merging and pulling
// together, one tool that speaks of pulling alone, and unrelated tools
// that make the catalog's other words common enough to tell apart.
func assocCatalog(opts IndexOptions) *Index {
	ix := NewIndex(opts)
	ix.SetUpstream("code", []Tool{
		{Name: "merge_pull", Description: "Merge a pull request into its base branch."},
		{Name: "review_pull", Description: "Review the pull request before you merge it."},
		{Name: "close_pull", Description: "Close a pull request without a merge."},
		{Name: "fetch_changes", Description: "Pull the latest commits of a branch."},
	})
	var misc []Tool
	for i, w := range []string{"weather", "forecast", "calendar", "event", "email", "invoice", "album", "playlist"} {
		misc = append(misc, Tool{Name: fmt.Sprintf("misc_%d", i), Description: "Show the " + w + " of today."})
	}
	ix.SetUpstream("misc", misc)
	return ix
}

func TestAssociationsReachCoOccurringTools(t *testing.T) {
	off := assocCatalog(IndexOptions{}).Search("merge", 0)
	on := assocCatalog(IndexOptions{AssociationWeight: 0.2}).Search("merge", 0)
	find := func(hits []Hit, name string) (Hit, bool) {
		for _, h := range hits {
			if h.Name == name {
				return h, true
			}
		}
		return Hit{}, false
	}
	if _, ok := find(off, "fetch_changes"); ok {
		t.Fatalf("without associations, %q reached fetch_changes: %v", "merge", off)
	}
	h, ok := find(on, "fetch_changes")
	if !ok {
		t.Fatalf("with associations, %q did not reach fetch_changes (pull goes with merge): %v", "merge", on)
	}
	if h.Coverage != 0 {
		t.Errorf("fetch_changes covers %.3f of the request through an association, want 0", h.Coverage)
	}
	// The tools holding the word itself keep their own score.
	for _, name := range []string{"merge_pull", "review_pull", "close_pull"} {
		a, okA := find(off, name)
		b, okB := find(on, name)
		if !okA || !okB || a.Raw != b.Raw || a.Coverage != b.Coverage {
			t.Errorf("%s: %+v without associations, %+v with; want the same", name, a, b)
		}
	}
	if on[len(on)-1].Name != "fetch_changes" {
		t.Errorf("fetch_changes ranks above a tool holding the word: %v", on)
	}
}

func TestAssociationsBounded(t *testing.T) {
	ix := assocCatalog(IndexOptions{AssociationWeight: 0.2})
	ix.Search("merge", 1) // refresh
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	term := func(w string) int32 {
		var id int32 = -1
		ix.docTok.each(w, func(term string, _ wordKind) { id = ix.terms[term] })
		if id < 0 {
			t.Fatalf("%s not indexed", w)
		}
		return id
	}
	pull, merge := term("pull"), term("merge")
	learned := 0
	for tid, as := range ix.assoc {
		if len(as) == 0 {
			continue
		}
		learned++
		if len(as) > assocTop {
			t.Errorf("%s: %d associates, want at most %d", ix.termNames[tid], len(as), assocTop)
		}
		for _, a := range as {
			if int(a.tid) == tid || a.weight <= 0 || a.weight > 0.2 {
				t.Errorf("%s: associate %s at weight %v", ix.termNames[tid], ix.termNames[a.tid], a.weight)
			}
			if len(ix.postings[a.tid]) < assocMinSupport {
				t.Errorf("%s: associate %s held by %d tools, under the support", ix.termNames[tid], ix.termNames[a.tid], len(ix.postings[a.tid]))
			}
		}
	}
	if learned == 0 {
		t.Fatal("no associations learned")
	}
	found := false
	for _, a := range ix.associatesOf(merge) {
		found = found || a.tid == pull
	}
	if !found {
		t.Errorf("merge's associates %v lack pull", ix.associatesOf(merge))
	}
	// The weather tool shares no word with the others: nothing learned.
	if as := ix.associatesOf(term("weather")); len(as) != 0 {
		t.Errorf("weather has associates %v, want none", as)
	}
}

func TestAssociationsOffByDefault(t *testing.T) {
	ix := assocCatalog(IndexOptions{})
	ix.Search("merge", 1)
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if len(ix.assoc) != 0 {
		t.Errorf("associations learned with AssociationWeight unset: %d terms", len(ix.assoc))
	}
}

// BenchmarkAssociationsRoute routes the BenchmarkRoute requests with
// associations on and off, and BenchmarkAssociationsBuild learns them
// over the same 1,000 tools (the refresh that follows a catalog change).
func BenchmarkAssociationsRoute(b *testing.B) {
	tools, queries := lexBenchCorpus(b)
	for _, w := range []float64{0, 0.2} {
		b.Run(fmt.Sprintf("weight=%v", w), func(b *testing.B) {
			ix := NewIndex(IndexOptions{AssociationWeight: w})
			for up, ts := range lexSyntheticCatalog(tools, 1_000) {
				ix.SetUpstream(up, ts)
			}
			ix.Search(queries[0], candidatePool) // refresh, untimed
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				ix.Search(queries[i%len(queries)], candidatePool)
			}
		})
	}
}

func BenchmarkAssociationsBuild(b *testing.B) {
	tools, _ := lexBenchCorpus(b)
	ix := NewIndex(IndexOptions{AssociationWeight: 0.2})
	for up, ts := range lexSyntheticCatalog(tools, 1_000) {
		ix.SetUpstream(up, ts)
	}
	ix.Search("warm up", 1)
	b.ResetTimer()
	for b.Loop() {
		ix.mu.Lock()
		ix.buildAssociations()
		ix.mu.Unlock()
	}
}
