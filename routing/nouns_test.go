package routing

import "testing"

// A request's noun outweighs its modifier: the two tools match one word
// of the request each, at the same IDF, in descriptions of one length,
// and the one that matches what the request is about ranks first.
func TestNounOutweighsModifier(t *testing.T) {
	ix := NewIndex(IndexOptions{})
	ix.SetUpstream("feeds", []Tool{
		{Name: "alpha", Description: "Returns the latest entries."},
		{Name: "beta", Description: "Returns the weather entries."},
	})
	hits := ix.Search("Can you show me the latest weather?", 0)
	if len(hits) < 2 || hits[0].Name != "beta" {
		t.Fatalf("got %v, want beta (weather) first", hits)
	}
	if hits[0].Raw <= hits[1].Raw {
		t.Errorf("beta's raw score %.3f, alpha's %.3f; want beta's higher", hits[0].Raw, hits[1].Raw)
	}
}

// A word that a tool's name holds counts in full, whatever its part of
// speech; the same word outside every name counts less.
func TestWordWeightNameWordsInFull(t *testing.T) {
	for _, tc := range []struct {
		name string
		tool Tool
		want float64
	}{
		{"in a name", Tool{Name: "get_latest", Description: "Returns entries."}, 1},
		{"in a description only", Tool{Name: "entries", Description: "Returns the latest entries."}, 0.7},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ix := NewIndex(IndexOptions{})
			ix.SetUpstream("feeds", []Tool{tc.tool})
			ix.rlockFresh()
			defer ix.mu.RUnlock()
			tid := ix.terms["latest"]
			first := &resolvedTerm{postings: ix.postings[tid], tid: tid, alt: 1, exact: true}
			if got := ix.wordWeight(&queryTerm{term: "latest", kind: termWord}, first); got != tc.want {
				t.Errorf("latest: weight %v, want %v", got, tc.want)
			}
		})
	}
}

// Nouns and words WordNet does not know count in full.
func TestWordWeightNounsInFull(t *testing.T) {
	ix := NewIndex(IndexOptions{})
	for _, w := range []string{"weather", "kubernet"} {
		if got := ix.wordWeight(&queryTerm{term: w, kind: termWord}, nil); got != 1 {
			t.Errorf("%s: weight %v, want 1", w, got)
		}
	}
}
