package routing

import (
	"context"
	"testing"
)

// unrelatedTools is a catalog with nothing for travel. create_ticket
// shares a lexicon group with "book" (booking, ticket, reservation), so
// that a travel request finds something, through a synonym only.
var unrelatedTools = []Tool{
	lexTool("get_env", "Read an environment variable.", "name", "Variable name"),
	lexTool("sleep", "Sleep for a number of seconds.", "seconds", "How long to wait"),
	lexTool("echo", "Echo the given text back.", "text", "Text to return"),
	lexTool("add", "Add two numbers.", "a", "First number", "b", "Second number"),
	lexTool("multiply", "Multiply two numbers.", "a", "First number", "b", "Second number"),
	lexTool("create_ticket", "Open a support ticket in the issue tracker.", "title", "Short summary"),
}

func TestUnrelatedRequestScoresUnderNoiseFloor(t *testing.T) {
	ix := lexIndex(IndexOptions{}, "util", unrelatedTools)
	hits := ix.Search("book a flight to Lisbon", 0)
	if len(hits) == 0 {
		t.Fatal("Search(book a flight to Lisbon) found nothing; want the synonym-only match create_ticket, to check its score")
	}
	for _, h := range hits {
		if h.Score >= DefaultNoiseFloor {
			t.Errorf("Search(book a flight to Lisbon): %s scores %.3f, want under the %.2f noise floor", h.Name, h.Score, DefaultNoiseFloor)
		}
	}
	for _, tc := range []struct{ query, want string }{
		{"read an environment variable", "get_env"},
		{"open a support ticket", "create_ticket"},
		{"multiply 6 by 7", "multiply"},
	} {
		hits := ix.Search(tc.query, 0)
		if len(hits) == 0 || hits[0].Name != tc.want || hits[0].Score < DefaultThreshold {
			t.Errorf("Search(%q) = %+v, want %s first at %.2f or more", tc.query, hits, tc.want, DefaultThreshold)
		}
	}
}

func TestRouteUnrelatedRequestSaysNoMatch(t *testing.T) {
	r := NewRouter(RouterOptions{})
	r.SetUpstream("util", unrelatedTools)
	d := r.Route(context.Background(), Request{Query: "book a flight to Lisbon"})
	if len(d.Selected) != 0 {
		t.Errorf("selected %v, want nothing", selectedNames(d))
	}
	if len(d.Alerts) != 1 || d.Alerts[0].Kind != "no_match" {
		t.Errorf("alerts %+v, want one no_match and no collision", d.Alerts)
	}
}

func TestSynonymOnlyMatchCoversLess(t *testing.T) {
	ix := lexIndex(IndexOptions{}, "fs", []Tool{
		lexTool("list_folder", "List the entries of a folder."),
		lexTool("read_file", "Read a file."),
	})
	var exact, synonym []evidence
	word := ix.search(nil, "folder", 1, &exact)
	syn := ix.search(nil, "directory", 1, &synonym) // directory ↔ folder
	if len(word) != 1 || len(syn) != 1 || word[0].Name != "list_folder" || syn[0].Name != "list_folder" {
		t.Fatalf("Search(folder) = %v, Search(directory) = %v; want list_folder for both", lexNames(word), lexNames(syn))
	}
	if c, ce := synonym[0].coverage, exact[0].coverage; c > calibSynonym*ce {
		t.Errorf("coverage through a synonym %.3f, through the word %.3f: want at most %.1f of it", c, ce, calibSynonym)
	}
	if syn[0].Score >= word[0].Score-0.2 {
		t.Errorf("score through a synonym %.3f, through the word %.3f: want clearly less", syn[0].Score, word[0].Score)
	}
}

func TestCalibrateTopToolByCoverage(t *testing.T) {
	for _, tc := range []struct {
		coverage float64
		min, max float64
	}{
		{1, 0.85, 1},                  // the whole request, in the name
		{0.2, DefaultThreshold, 0.6},  // a fifth: kept
		{0.05, 0, DefaultNoiseFloor},  // next to nothing: noise
		{0, 0, DefaultNoiseFloor / 2}, // nothing
	} {
		if s := calibrate(evidence{coverage: tc.coverage, relative: 1}); s < tc.min || s > tc.max {
			t.Errorf("top tool with coverage %.2f scores %.3f, want within [%.2f, %.2f]", tc.coverage, s, tc.min, tc.max)
		}
	}
}
