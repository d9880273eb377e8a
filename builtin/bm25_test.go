package builtin

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestTokenize(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"lower-cases and splits on punctuation", "Install the Proxy: max_bytes=10!", []string{"install", "proxy", "max", "bytes", "10"}},
		{"drops stop words", "how do I install it", []string{"install"}},
		{"drops contraction tails", "don't won't", []string{"don", "won"}},
		{"keeps non-ASCII letters", "Café naïve 東京", []string{"café", "naïve", "東京"}},
		{"only stop words", "the and of", []string{}},
		{"empty", "", []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, tokenize(tt.in)); diff != "" {
				t.Errorf("tokenize(%q) mismatch (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestBM25Ranking(t *testing.T) {
	passages := []passage{
		{path: "b.md", line: 1, text: "cats and dogs"},
		{path: "a.md", line: 9, text: "dogs dogs dogs everywhere"},
		{path: "a.md", line: 1, text: "cats cats cats"},
		{path: "c.md", line: 1, heading: "Dogs", text: "a loyal companion"},
		{path: "c.md", line: 5, text: "nothing relevant here at all, a long passage about something else entirely"},
	}
	ix := newBM25Index(passages, 3)
	tests := []struct {
		name  string
		query string
		limit int
		want  []string // path:line, best first
	}{
		{"more occurrences, then shorter passages, rank higher; headings count", "dogs", 10, []string{"a.md:9", "b.md:1", "c.md:1"}},
		{"rarer terms weigh more", "cats companion", 10, []string{"c.md:1", "a.md:1", "b.md:1"}},
		{"repeating a query word changes nothing", "cats cats cats", 10, []string{"a.md:1", "b.md:1"}},
		{"case does not matter", "CATS", 1, []string{"a.md:1"}},
		{"limit cuts the list", "dogs", 2, []string{"a.md:9", "b.md:1"}},
		{"no match", "zebra", 10, []string{}},
		{"stop words only", "the of and", 10, []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := []string{}
			for _, h := range ix.search(tt.query, tt.limit) {
				got = append(got, fmt.Sprintf("%s:%d", h.passage.path, h.passage.line))
				if h.score <= 0 || math.IsNaN(h.score) {
					t.Errorf("%s:%d: got score %v, want a positive number", h.passage.path, h.passage.line, h.score)
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("search(%q) mismatch (-want +got):\n%s", tt.query, diff)
			}
		})
	}
}

func TestBM25TiesGoToPathThenPosition(t *testing.T) {
	same := "identical words here"
	ix := newBM25Index([]passage{
		{path: "z.md", line: 1, text: same},
		{path: "a/b.md", line: 7, text: same},
		{path: "a-c.md", line: 1, text: same},
		{path: "a/b.md", line: 3, text: same},
	}, 3)
	var got []string
	for _, h := range ix.search("identical", 10) {
		got = append(got, fmt.Sprintf("%s:%d", h.passage.path, h.passage.line))
	}
	want := []string{"a-c.md:1", "a/b.md:3", "a/b.md:7", "z.md:1"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tie order mismatch (-want +got):\n%s", diff)
	}
}

func TestBM25Score(t *testing.T) {
	// One matching passage of 2 tokens among 2 passages averaging 2 tokens:
	// idf = ln(1 + (2-1+0.5)/(1+0.5)) = ln 2, and tf=1 at average length gives (k1+1)/(1+k1) = 1.
	ix := newBM25Index([]passage{{path: "a", text: "alpha beta"}, {path: "b", text: "gamma delta"}}, 2)
	hits := ix.search("alpha", 5)
	if len(hits) != 1 {
		t.Fatalf("got %d hits, want 1", len(hits))
	}
	if want := math.Ln2; math.Abs(hits[0].score-want) > 1e-12 {
		t.Errorf("score: got %v, want %v", hits[0].score, want)
	}
}

func BenchmarkBM25Search(b *testing.B) {
	var passages []passage
	for i := range 5000 {
		passages = append(passages, passage{path: fmt.Sprintf("doc%d.md", i%100), line: i,
			text: strings.Repeat(fmt.Sprintf("term%d common words about topic%d ", i%37, i%11), 20)})
	}
	ix := newBM25Index(passages, 100)
	for b.Loop() {
		ix.search("term5 topic3 common", 5)
	}
}
