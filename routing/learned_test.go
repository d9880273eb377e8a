package routing

import "testing"

// A learned table's targets join a request as synonyms of its word: with
// "drama" pointing to "show", a request about a drama finds the listings
// tool that no word of the request names; without a table (the default)
// it finds nothing.
func TestLearnedTargetsJoinTheRequest(t *testing.T) {
	tools := []Tool{
		{Name: "listings", Description: "What show is on television tonight."},
		{Name: "forecast", Description: "The weather for a city."},
	}
	plain := NewIndex(IndexOptions{})
	plain.SetUpstream("tv", tools)
	if hits := plain.Search("a gripping drama", 0); len(hits) != 0 {
		t.Fatalf("without a table: got %v, want nothing", hits)
	}
	learned := NewIndex(IndexOptions{Learned: Learned{"drama": {"show"}}})
	learned.SetUpstream("tv", tools)
	hits := learned.Search("a gripping drama", 0)
	if len(hits) != 1 || hits[0].Name != "listings" {
		t.Fatalf("with drama → show: got %v, want listings alone", hits)
	}
}
