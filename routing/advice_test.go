package routing

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

func TestAsksAdvice(t *testing.T) {
	for _, tc := range []struct {
		query string
		want  bool
	}{
		{"How do I deep clean the oven?", true},
		{"how to remove wallpaper without damaging the wall", true},
		{"How often should I bathe my rabbit?", true},
		{"What's the best way to replace drywall?", true},
		{"What’s the best gaming laptop under $800?", true},
		{"What are the signs of a flea infestation in my cat?", true},
		{"Is it safe to hike in the Rockies this weekend?", true},
		{"I'm tired of these apps. Can you recommend a language tutor?", true},
		{"Could you please suggest a song for a wedding?", true},
		{"Help me choose a pair of headphones", true},
		{"Can you give me a step-by-step guide to caulking windows?", true},
		{"Can you go to the bank and deposit this check for me?", true},
		{"Stop by the pet store on the way home", true},
		{"Can you pick up my dry cleaning from the store downtown?", true},
		// Requests some tool serves, and other languages.
		{"What is 2 plus 3?", false},
		{"show me the contents of notes.txt", false},
		{"fetch https://example.com and list its links", false},
		{"How many open issues does the repo have?", false},
		{"What's the weather in Paris tomorrow?", false},
		{"remember that Alice works at Acme", false},
		{"Go through the logs and find errors", false},
		{"如何清洁烤箱", false},
	} {
		if got := asksAdvice(tc.query); got != tc.want {
			t.Errorf("asksAdvice(%q) = %v, want %v", tc.query, got, tc.want)
		}
	}
}

// TestHitsCountForeignNouns: Foreign counts the request's English nouns
// that the catalog knows neither directly nor through a synonym, not its
// verbs, names or quoted values, nor the words the catalog has.
func TestHitsCountForeignNouns(t *testing.T) {
	ix := NewIndex(IndexOptions{})
	ix.SetUpstream("dev", commitDevTools())
	for _, tc := range []struct {
		query string
		want  int
	}{
		{"clean the oven and the carpet", 2},         // oven, carpet
		{"clean the build for Zanzibarqux", 0},       // a name, not English
		{`clean the files named "oven carpet"`, 0},   // a quoted value
		{"clean the cache, then find the files", 0},  // the catalog's words
		{"quickly clean the oven and the carpet", 2}, // quickly is no noun
	} {
		hits := ix.Search(tc.query, 3)
		if len(hits) == 0 {
			t.Fatalf("%q: no hits", tc.query)
		}
		if got := hits[0].Foreign; got != tc.want {
			t.Errorf("%q: Foreign %d, want %d", tc.query, got, tc.want)
		}
	}
}

// TestRouteAbstainsOnAdviceAboutUnknownThings: a request for know-how
// about things the catalog has never heard of is one no tool serves,
// though a tool matches some of its words; the no_match alert says why.
// The check alone decides it here: the commitment check is off.
func TestRouteAbstainsOnAdviceAboutUnknownThings(t *testing.T) {
	const query = "How do I get rid of the stubborn stain on my living room carpet?"
	off := commitRouter(RouterOptions{AbstainCommitment: -1, AbstainAdvice: -1}).Route(context.Background(), Request{Query: query})
	if off.Abstained || len(off.Selected) == 0 {
		t.Fatalf("without the advice check: abstained %v, selected %v; want the ranking's tools", off.Abstained, names(off.Selected))
	}
	d := commitRouter(RouterOptions{AbstainCommitment: -1}).Route(context.Background(), Request{Query: query})
	if !d.Abstained || len(d.Selected) != 0 {
		t.Fatalf("abstained %v, selected %v; want an abstention", d.Abstained, names(d.Selected))
	}
	a := alertOf(d, "no_match")
	if a == nil || !strings.Contains(a.Message, "advice or an errand") {
		t.Fatalf("alerts %v: want a no_match alert that gives the reason", d.Alerts)
	}
	// It names what the catalog does not know, and what the closest
	// tool matches.
	_, unknown, _ := strings.Cut(a.Message, "no tool knows ")
	unknown, _, _ = strings.Cut(unknown, ";")
	if !strings.Contains(unknown, `"stain"`) || !strings.Contains(unknown, `"carpet"`) {
		t.Errorf("no_match message %q: want the unknown words stain and carpet named", a.Message)
	}
	if !strings.Contains(a.Message, d.Ranked[0].Name+" (matches \"") {
		t.Errorf("no_match message %q: want the words %s matches named", a.Message, d.Ranked[0].Name)
	}
}

// TestRouteAdviceThatAToolServes: put as a request for advice, with
// words the catalog does not know, a request that a tool does most of is
// still routed to it; and one that names the catalog's own things is not
// taken for advice about unknown ones. A tool that matches adviceMatched
// of its words is not refused for the unknown ones (plan_meals, named
// for nothing the request names).
func TestRouteAdviceThatAToolServes(t *testing.T) {
	wantRouted(t, commitRouter(RouterOptions{}), []routedCase{
		{"How do I make a shopping list of ingredients for my grandmother's birthday party?", "plan_meals"},
		{"What's the best way to clean up dangling docker images on my laptop before my vacation?", "clean_docker_images"},
		{"How do I find which process listens on port 8080?", "find_port"},
		{"Can you recommend a vegan recipe for dinner?", "find_recipes"},
	})
}

// BenchmarkAsksAdvice reads the form of a long request that is not one
// (the whole request is scanned) and of one that is.
func BenchmarkAsksAdvice(b *testing.B) {
	long := strings.Repeat("retrieve the quarterly revenue figures for every region and then ", 4) + "plot them"
	for _, q := range []string{long, "I'm tired of these apps. Can you recommend a language tutor?"} {
		b.Run(fmt.Sprint(len(q)), func(b *testing.B) {
			for b.Loop() {
				asksAdvice(q)
			}
		})
	}
}
