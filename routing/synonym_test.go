package routing

import (
	"context"
	"slices"
	"testing"
)

// When no tool has a request's word, its lexicon synonyms stand in for
// it at the word's full weight: "films" (which no tool says) finds the
// cinema tool, whose "cinema" is the catalog's word for it, ahead of a
// tool that matches only the request's "tonight".
func TestSynonymsStandInForAWordTheCatalogLacks(t *testing.T) {
	ix := NewIndex(IndexOptions{})
	ix.SetUpstream("town", []Tool{
		{Name: "guide", Description: "Listings of the cinema."},
		{Name: "agenda", Description: "Listings of tonight."},
	})
	hits := ix.Search("which films are on tonight", 0)
	if len(hits) < 2 || hits[0].Name != "guide" {
		t.Fatalf("got %v, want guide (cinema) first", hits)
	}
	// The word itself still outranks its synonym.
	ix.SetUpstream("town", []Tool{
		{Name: "guide", Description: "Listings of the cinema."},
		{Name: "reel", Description: "Listings of films."},
	})
	if hits := ix.Search("which films are on tonight", 0); len(hits) < 2 || hits[0].Name != "reel" {
		t.Fatalf("got %v, want reel (films) first", hits)
	}
}

// The router abstains only when no top tool covers enough of the
// request: a top tool raised by a synonym standing in for a word matches
// little of the request by coverage, and the tool below it that matches
// the rest is still handed over.
func TestRouteKeepsACoveredToolBelowAStandIn(t *testing.T) {
	r := NewRouter(RouterOptions{})
	r.SetUpstream("town", []Tool{
		{Name: "guide", Description: "Listings of the cinema."},
		{Name: "agenda", Description: "Listings of tonight."},
	})
	d := r.Route(context.Background(), Request{Query: "which films are on tonight"})
	if len(d.Ranked) < 2 || d.Ranked[0].Name != "guide" || d.Ranked[0].Coverage >= DefaultAbstainCoverage {
		t.Fatalf("ranked %+v, want guide first with coverage under %.2f", d.Ranked, DefaultAbstainCoverage)
	}
	if d.Abstained || !slices.ContainsFunc(d.Selected, func(c Candidate) bool { return c.Name == "agenda" }) {
		t.Errorf("abstained %v, selected %v; want agenda selected", d.Abstained, selectedNames(d))
	}
}
