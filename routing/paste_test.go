package routing

import (
	"context"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestRoutePastedDataDoesNotSteer: a tool result pasted into a request
// leaves the ranking to what the request asks.
func TestRoutePastedDataDoesNotSteer(t *testing.T) {
	r := seedRouter(t)
	for _, q := range []string{
		"fetch the page and list its links. Tool output was: sqrt=4 log=2 exp=7 modulo 3",
		`fetch the page: [{"name":"sqrt"},{"name":"log"},{"name":"modulo"}]`,
		"fetch the page and list its links\n```\nsqrt 4\nlog 2\nmodulo 3\n```",
		"fetch the page and list its links\n12:00:01 INF modulo ready sqrt=4 log=2 exp=7",
	} {
		d := r.Route(context.Background(), Request{Query: q})
		if len(d.Ranked) < 2 || !strings.HasPrefix(d.Ranked[0].Name, "web_") || !strings.HasPrefix(d.Ranked[1].Name, "web_") {
			t.Errorf("%q: ranked %v, want the two web tools first", q, hitsOf(d.Ranked[:min(4, len(d.Ranked))]))
		}
		for _, c := range d.Selected {
			if strings.HasPrefix(c.Name, "calculator_") {
				t.Errorf("%q: selected %v, want no calculator tool", q, names(d.Selected))
				break
			}
		}
	}
}

func TestDropData(t *testing.T) {
	for _, tc := range []struct {
		name   string
		in     string
		has    []string // words the request keeps
		hasNot []string // words dropped
	}{
		// Dropped.
		{name: "code block", in: "explain this code ```go\nfunc sqrt(x float64) float64\n``` please", has: []string{"explain", "please"}, hasNot: []string{"sqrt", "func"}},
		{name: "code block left open", in: "explain this code:\n```\nfunc sqrt(x float64) float64", has: []string{"explain"}, hasNot: []string{"sqrt"}},
		{name: "array of objects", in: `fetch the page: [{"name":"sqrt"},{"name":"log"}]`, has: []string{"fetch", "page"}, hasNot: []string{"sqrt", "log"}},
		{name: "short array of an object", in: `fetch the page: [{"n":"sqrt"}]`, has: []string{"fetch"}, hasNot: []string{"sqrt"}},
		{name: "array of strings", in: `fetch the page, it said ["sqrt", "log", "modulo"]`, has: []string{"fetch"}, hasNot: []string{"sqrt", "modulo"}},
		{name: "python list of dicts", in: "fetch the page, it said [{'name': 'sqrt'}, {'name': None}]", has: []string{"fetch"}, hasNot: []string{"sqrt"}},
		{name: "truncated JSON", in: `fetch the page, it said {"tools": [{"name": "sqrt"}, {"name": "lo`, has: []string{"fetch"}, hasNot: []string{"sqrt", "tools"}},
		{name: "key=value run", in: "fetch the page. Tool output was: sqrt=4 log=2 exp=7 modulo 3", has: []string{"fetch", "page", "Tool"}, hasNot: []string{"sqrt", "exp", "modulo"}},
		{name: "key: value lines", in: "fetch the page\nname: sqrt\nresult: 4\nname: modulo\nresult: 1", has: []string{"fetch"}, hasNot: []string{"sqrt", "modulo", "result"}},
		{name: "log line", in: "why does the upload fail?\n2024-05-01T12:00:01Z WARN modulo connected upstream=docs tools=1", has: []string{"upload", "fail"}, hasNot: []string{"modulo", "connected"}},
		{name: "object in a list of words", in: `sort [apples, {"colour": "red", "size": 3}] by name`, has: []string{"apples", "sort"}, hasNot: []string{"colour"}},

		// Kept.
		{name: "arithmetic", in: "add 2 and 3", has: []string{"add", "2", "3"}},
		{name: "question with operator", in: "What is 25 + 37?", has: []string{"25", "+", "37"}},
		{name: "bare operation", in: "2 + 3", has: []string{"2", "+", "3"}},
		{name: "file name", in: "show me the contents of notes.txt", has: []string{"notes.txt"}},
		{name: "address", in: "fetch https://example.com/a?b=1&c=2", has: []string{"https://example.com/a?b=1&c=2"}},
		{name: "quoted name", in: "find the file called 'report.pdf'", has: []string{"'report.pdf'"}},
		{name: "short object of arguments", in: `add {"a": 7, "b": 2} please`, has: []string{`{"a": 7, "b": 2}`}},
		{name: "list of words", in: "sort [apples, pears, plums] by name", has: []string{"apples"}},
		{name: "short list of numbers", in: "sum the numbers [1, 2, 3]", has: []string{"[1, 2, 3]"}},
		{name: "two times", in: "between 10:00 and 12:30 book a meeting room", has: []string{"10:00", "12:30"}},
		{name: "a label", in: "Note: fetch the page and list its links", has: []string{"Note:", "fetch"}},
		{name: "one pair", in: "call add with a=1 and then fetch", has: []string{"a=1"}},
		{name: "prose with numbers", in: "book 2 rooms for 3 nights at 10:30\nand 4 more for 5 nights", has: []string{"rooms", "nights", "more"}},
		{name: "nothing else to go by", in: "sqrt=4 log=2 exp=7", has: []string{"sqrt=4"}},
		{name: "mismatched brackets", in: "see [this} and {that] for the sqrt", has: []string{"this", "that", "sqrt"}},
	} {
		got := dropData(tc.in)
		for _, w := range tc.has {
			if !strings.Contains(got, w) {
				t.Errorf("%s: dropData(%q) = %q, want %q kept", tc.name, tc.in, got, w)
			}
		}
		for _, w := range tc.hasNot {
			if strings.Contains(got, w) {
				t.Errorf("%s: dropData(%q) = %q, want %q dropped", tc.name, tc.in, got, w)
			}
		}
	}
}

func TestClassifyToken(t *testing.T) {
	for _, tc := range []struct {
		tok  string
		want tokenKind
	}{
		{"fetch", tokenWord},
		{"page.", tokenWord},
		{"notes.txt", tokenWord},
		{"https://example.com/a?b=1", tokenWord},
		{"bob@example.com", tokenWord},
		{"well-known", tokenWord},
		{"3", tokenFiller},
		{"-74.0,", tokenFiller},
		{"1,000", tokenFiller},
		{"+", tokenFiller},
		{"->", tokenFiller},
		{"sqrt=4", tokenRecord},
		{"status:", tokenRecord},
		{"12:30:05", tokenRecord},
		{"2024-05-01", tokenRecord},
		{"12ms", tokenRecord},
		{"0x7f", tokenRecord},
		{"1.2.3", tokenRecord},
		{"3f2a9c1e7b", tokenRecord},
		{`{"name":"sqrt"},`, tokenRecord},
	} {
		if got := classify(tc.tok); got != tc.want {
			t.Errorf("classify(%q) = %d, want %d", tc.tok, got, tc.want)
		}
	}
}

// FuzzDropData: whatever the request, dropping data does not fail, and
// leaves valid UTF-8 no longer than the request.
func FuzzDropData(f *testing.F) {
	for _, s := range []string{
		"fetch the page. Tool output was: sqrt=4 log=2 exp=7 modulo 3",
		`fetch [{"name":"sqrt"},{"name":"log"}] and {"a": "bbbbbbbbbbbbbbbbbbbbbbbbbb"`,
		"explain ```go\nfunc main() {}``` é ``` x",
		"a [b {c] d} e \"[\" f",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, q string) {
		if !utf8.ValidString(q) {
			return
		}
		got := dropData(q)
		if !utf8.ValidString(got) || len(got) > len(q) {
			t.Errorf("dropData(%q) = %q, want valid UTF-8 no longer than the request", q, got)
		}
	})
}

// BenchmarkDropData drops data from the benchmark requests, and from a
// request carrying a 4 KiB tool result: its cost per request.
func BenchmarkDropData(b *testing.B) {
	_, queries := lexBenchCorpus(b)
	b.Run("requests", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			dropData(queries[i%len(queries)])
		}
	})
	b.Run("pasted", func(b *testing.B) {
		q := "fetch the page and list its links. Tool output was:\n" +
			strings.Repeat("12:00:01 INF upstream ready upstream=web tools=2 {\"name\": [\"sqrt\", 1]}\n", 60)
		q = q[:maxPrepared]
		for b.Loop() {
			dropData(q)
		}
	})
}
