package routing

import (
	"slices"
	"strings"
	"testing"
)

func TestPrepareRewritesOperatorsAndValues(t *testing.T) {
	for _, tc := range []struct {
		in      string
		has     []string // words the prepared text holds
		hasNot  []string // words it must not hold
		values  []string // values found
		noValue []string // words that are not values
	}{
		{in: "What is 25 + 37?", has: []string{"add", "sum"}},
		{in: "what is 2 plus 3", has: []string{"add", "sum"}, hasNot: []string{"plus"}},
		{in: "6 times 7", has: []string{"multiply"}},
		{in: "I go there three times a week", has: []string{"times"}, hasNot: []string{"multiply"}},
		{in: "12 / 4", has: []string{"divide"}},
		{in: "solve 3x^2 + 4x - 7 = 0", hasNot: []string{"add", "subtract", "power"}},
		{in: "a well-known tool", hasNot: []string{"subtract"}},
		{in: "Book a ride of type Plus", has: []string{"Plus"}, hasNot: []string{"add"}},
		{in: "open notes.txt", has: []string{"read", "file", "txt"}, hasNot: []string{"open", "notes"}},
		{in: "open a pull request", has: []string{"open"}, hasNot: []string{"read"}},
		{in: "what's in todo.md", has: []string{"read", "file", "md"}},
		{in: "show me the contents of report.pdf", has: []string{"read", "contents", "file", "pdf", "document"}},
		{in: "describe image.png", has: []string{"file", "png", "image"}},
		{in: "version 1.2.3 of e.g. the app", hasNot: []string{"file"}},
		{in: "fetch https://api.example.com/v1/recommendations?x=1", has: []string{"url", "recommendations"}, hasNot: []string{"example", "api.example"}},
		{in: "mail bob@example.com the notes", has: []string{"email"}, hasNot: []string{"bob@"}},
		{in: "{\"status\": \"weather ok\", \"rows\": 3}", has: []string{"weather"}}, // nothing else to go by
		{in: "sort [apples, pears, plums] by name", has: []string{"apples"}},
		{in: "remember that Alice works at Acme", values: []string{"alice", "works", "at", "acme"}, noValue: []string{"remember"}},
		{in: "Search for \"machine learning\" on Semgrep", values: []string{"machine", "learning", "semgrep"}, noValue: []string{"search"}},
		{in: "what's the weather, don't guess", noValue: []string{"s", "t", "the"}},
		{in: "PDF to JSON", noValue: []string{"pdf", "json"}},
	} {
		p := prepare(tc.in, 0)
		for _, w := range tc.has {
			if !strings.Contains(p.text, w) {
				t.Errorf("prepare(%q) = %q, want the word %q", tc.in, p.text, w)
			}
		}
		for _, w := range tc.hasNot {
			if strings.Contains(p.text, w) {
				t.Errorf("prepare(%q) = %q, want no %q", tc.in, p.text, w)
			}
		}
		for _, v := range tc.values {
			if !slices.Contains(p.values, v) {
				t.Errorf("prepare(%q) values %q, want %q among them", tc.in, p.values, v)
			}
		}
		for _, v := range tc.noValue {
			if slices.Contains(p.values, v) {
				t.Errorf("prepare(%q) values %q, want no %q", tc.in, p.values, v)
			}
		}
	}
}

// TestBetweenDigitsPassesEveryOperator: the test that spares requests
// the operator regexp lets through every text it matches, and turns away
// numbers with no operator between them.
func TestBetweenDigitsPassesEveryOperator(t *testing.T) {
	for _, q := range []string{"25 + 37", "2**8", "2 ** 8", "12 / 4", "7 - 2", "7 − 2", "3×4", "3 ÷ 4", "2^10", "6\t*\n7", "a 1.5*2.5 b"} {
		if !opRe.MatchString(q) || !betweenDigits(q) {
			t.Errorf("%q: opRe matches %v, betweenDigits %v; want both", q, opRe.MatchString(q), betweenDigits(q))
		}
	}
	for _, q := range []string{"call 555 1234", "top 10 repos", "a well-known tool", "3 * x", "x - 3", "", "***"} {
		if betweenDigits(q) {
			t.Errorf("betweenDigits(%q) = true, want false", q)
		}
	}
}

// FuzzBetweenDigits: whatever opRe matches, betweenDigits lets through.
func FuzzBetweenDigits(f *testing.F) {
	for _, q := range []string{"25 + 37", "2 ** 8", "1 + 2 + 3", "12 / 4", "2024-01-05", "3x^2 + 4x - 7"} {
		f.Add(q)
	}
	f.Fuzz(func(t *testing.T, q string) {
		if opRe.MatchString(q) && !betweenDigits(q) {
			t.Errorf("opRe matches %q but betweenDigits turns it away", q)
		}
	})
}

// TestStartsPathPassesEveryPath: the test that spares requests the path
// regexp lets through every path it matches, and turns away slashes
// inside words.
func TestStartsPathPassesEveryPath(t *testing.T) {
	for _, q := range []string{"/etc/hosts", "read ~/notes/a.md", "open ../src/x", "in\t./a/b"} {
		if !pathRe.MatchString(q) || !startsPath(q) {
			t.Errorf("%q: pathRe matches %v, startsPath %v; want both", q, pathRe.MatchString(q), startsPath(q))
		}
	}
	for _, q := range []string{"and/or", "50 km/h", "3/4 of it", "a/b/c", ""} {
		if startsPath(q) {
			t.Errorf("startsPath(%q) = true, want false", q)
		}
	}
}

// FuzzStartsPath: whatever pathRe matches, startsPath lets through.
func FuzzStartsPath(f *testing.F) {
	for _, q := range []string{"/etc/hosts", "read ~/a/b", "../x/y", "and/or", "a /b/c"} {
		f.Add(q)
	}
	f.Fuzz(func(t *testing.T, q string) {
		if pathRe.MatchString(q) && !startsPath(q) {
			t.Errorf("pathRe matches %q but startsPath turns it away", q)
		}
	})
}

// TestPrepareBoundsItsInput: a huge request is cut, at a rune boundary.
func TestPrepareBoundsItsInput(t *testing.T) {
	p := prepare(strings.Repeat("é", maxPrepared), 0)
	if len(p.text) > maxPrepared || !strings.HasSuffix(p.text, "é") {
		t.Errorf("prepared %d bytes ending %q, want at most %d ending in a whole rune", len(p.text), p.text[len(p.text)-2:], maxPrepared)
	}
}

// TestWordnetTable: the embedded table links a verb to its noun, knows
// how much a word is a noun, and stays small.
func TestWordnetTable(t *testing.T) {
	if n := len(wordnetTable); n == 0 || n > 4<<20 {
		t.Fatalf("wordnet.txt is %d bytes, want some and at most 4 MB", n)
	}
	if rel := relationsOf(stem("remember")); !slices.Contains(rel.derived, stem("memory")) {
		t.Errorf("remember: derived %v, want memory", rel.derived)
	}
	if rel := relationsOf(stem("find")); !rel.english || rel.notNoun < 8 {
		t.Errorf("find: %+v, want an English word seldom a noun", rel)
	}
}

// BenchmarkPrepare rewrites the benchmark requests BenchmarkRoute routes.
func BenchmarkPrepare(b *testing.B) {
	_, queries := lexBenchCorpus(b)
	for i := 0; b.Loop(); i++ {
		prepare(queries[i%len(queries)], 0)
	}
}
