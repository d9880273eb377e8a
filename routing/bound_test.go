package routing

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// longQueries are requests far longer than any person writes: routing
// must stay near-linear in their length.
func longQueries() map[string]string {
	var distinct strings.Builder
	for i := 0; distinct.Len() < 1<<20; i++ {
		fmt.Fprintf(&distinct, "w%dx ", i)
	}
	return map[string]string{
		"100KB_text":    strings.Repeat("get the system logs of the kernel and divide 10 by 4 ", 100<<10/53),
		"4MB_one_word":  strings.Repeat("logs ", 4<<20/5),
		"1MB_distinct":  distinct.String(),
		"4MB_and_then":  strings.Repeat("and then ", 4<<20/9),
		"1MB_no_spaces": strings.Repeat("x", 1<<20),
	}
}

// benchRouter is a catalog of a few hundred tools.
func benchRouter() *Router {
	r := NewRouter(RouterOptions{})
	for u := range 20 {
		up := fmt.Sprintf("up%d", u)
		var tools []Tool
		for i := range 20 {
			tools = append(tools, Tool{Name: fmt.Sprintf("%s_tool%d", up, i), Original: fmt.Sprintf("tool%d", i), Upstream: up,
				Description: fmt.Sprintf("Get the logs of service %d, divide numbers, read file %d of the system kernel", i, u)})
		}
		r.SetUpstream(up, tools)
	}
	return r
}

// BenchmarkRouteLongQuery routes queries of 100 KB to 4 MB.
func BenchmarkRouteLongQuery(b *testing.B) {
	r := benchRouter()
	for name, q := range longQueries() {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(q)))
			for b.Loop() {
				r.Route(context.Background(), Request{Query: q})
			}
		})
	}
}

// segmentsReference is segments as it was before it kept its state as it
// scans: it looked back over the clause at every segment word.
func segmentsReference(q string, limit int) []string {
	onlySegmentWords := func(s string) bool {
		for _, w := range strings.Fields(s) {
			if !segmentWords[strings.ToLower(w)] {
				return false
			}
		}
		return true
	}
	var out []string
	start := 0
	cut := func(end int) {
		if len(out) == limit-1 {
			return
		}
		if s := strings.TrimSpace(q[start:end]); s != "" {
			out = append(out, s)
			start = end
		}
	}
	for i := 0; i < len(q); {
		r, size := utf8.DecodeRuneInString(q[i:])
		next := i + size
		switch {
		case r == '\n' || r == ';' || r == '。' || r == '？' || r == '！':
			cut(next)
		case r == '.' || r == '?' || r == '!':
			if (next == len(q) || q[next] == ' ' || q[next] == '"') && !endsAbbreviation(q[:i]) {
				cut(next)
			}
		case unicode.IsLetter(r) && (i == 0 || !isWordByte(q[i-1])):
			end := i
			for end < len(q) && isWordByte(q[end]) {
				end++
			}
			if segmentWords[strings.ToLower(q[i:end])] && !onlySegmentWords(q[start:i]) {
				cut(i)
			}
			next = max(end, next)
		}
		i = next
	}
	if s := strings.TrimSpace(q[start:]); s != "" {
		out = append(out, s)
	}
	return out
}

// TestBoundRouteSegmentsLinear: segments, now linear in the request's
// length, splits every request as before.
func TestBoundRouteSegmentsLinear(t *testing.T) {
	words := []string{"and", "then", "Also", "find", "logs", "e.g.", "etc.", "5", "x-and", "and,", "—", "é", "andé",
		".", "?", "!", ";", "\n", "。", " ", "  ", "\t", "\"", "then.", "vs.", "a."}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		var b strings.Builder
		for range rng.IntN(14) {
			b.WriteString(words[rng.IntN(len(words))])
			if rng.IntN(3) > 0 {
				b.WriteByte(' ')
			}
		}
		q := b.String()
		for _, limit := range []int{1, 2, 3, maxSegments} {
			if got, want := segments(q, limit), segmentsReference(q, limit); !slices.Equal(got, want) {
				t.Fatalf("segments(%q, %d) = %q, want %q", q, limit, got, want)
			}
		}
	}
}

// The query tokenizer's memo of words holds at most termMemoSize of them,
// however many distinct words requests bring, and still answers for the
// words it keeps.
func TestBoundTermMemo(t *testing.T) {
	tok := &Tokenizer{query: true, memo: &termMemo{}}
	for i := range termMemoSize + termMemoSize/2 {
		tok.Tokens(fmt.Sprintf("w%dx", i))
	}
	tok.memo.mu.RLock()
	n := len(tok.memo.m)
	tok.memo.mu.RUnlock()
	if n > termMemoSize || n == 0 {
		t.Errorf("memo holds %d words after %d distinct ones, want 1 to %d", n, termMemoSize+termMemoSize/2, termMemoSize)
	}
	if got := tok.Tokens("Weather forecasts"); !slices.Equal(got, []string{"weather", "forecast"}) {
		t.Errorf("Tokens after the memo was emptied = %q", got)
	}
	if _, ok := tok.memo.get("forecasts"); !ok {
		t.Error("the memo did not keep a word just tokenized")
	}
}
