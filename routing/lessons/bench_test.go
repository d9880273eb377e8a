package lessons

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/mcp-router/mcp-router/routing"
)

// synthetic makes request-like texts: 4 to 14 words drawn from a Zipf
// distribution over a vocabulary of pronounceable made-up words, so that
// a few words are in many texts (like "find" or "file") and most are rare.
type synthetic struct {
	rng   *rand.Rand
	zipf  *rand.Zipf
	vocab []string
}

func newSynthetic(seed uint64, words int) *synthetic {
	rng := rand.New(rand.NewPCG(seed, 1))
	syl := []string{"ka", "lo", "mi", "ne", "ru", "sa", "to", "vi", "da", "pe", "gor", "lin", "mar", "tes", "qua", "bel"}
	seen := map[string]bool{}
	var vocab []string
	for len(vocab) < words {
		var b strings.Builder
		for range 2 + rng.IntN(2) {
			b.WriteString(syl[rng.IntN(len(syl))])
		}
		if w := b.String(); !seen[w] {
			seen[w] = true
			vocab = append(vocab, w)
		}
	}
	return &synthetic{rng: rng, zipf: rand.NewZipf(rng, 1.1, 2, uint64(words-1)), vocab: vocab}
}

func (s *synthetic) text() string {
	n := 4 + s.rng.IntN(11)
	words := make([]string, n)
	for i := range words {
		words[i] = s.vocab[s.zipf.Uint64()]
	}
	return strings.Join(words, " ")
}

// variant replaces one word of text, as a rephrased request would.
func (s *synthetic) variant(text string) string {
	words := strings.Fields(text)
	words[s.rng.IntN(len(words))] = s.vocab[s.zipf.Uint64()]
	return strings.Join(words, " ")
}

// benchMemory returns a Memory of n synthetic lessons and queries to ask
// it: half rephrased lessons, half new texts.
func benchMemory(b *testing.B, n int) (*Memory, []string) {
	b.Helper()
	ctx := context.Background()
	m, err := NewMemory(ctx, newMemStore(), MemoryOptions{MaxLessons: n})
	if err != nil {
		b.Fatal(err)
	}
	syn := newSynthetic(7, 3000)
	var taught []string
	for m.Len() < n {
		q := syn.text()
		if _, err := m.Learn(ctx, Lesson{Query: q, Tool: fmt.Sprintf("tool_%d", syn.rng.IntN(300)), Polarity: Use}); err != nil {
			b.Fatal(err)
		}
		taught = append(taught, q)
	}
	queries := make([]string, 512)
	for i := range queries {
		if i%2 == 0 {
			queries[i] = syn.variant(taught[syn.rng.IntN(len(taught))])
		} else {
			queries[i] = syn.text()
		}
	}
	return m, queries
}

func BenchmarkAdjust(b *testing.B) {
	for _, n := range []int{100, 1000} {
		b.Run(fmt.Sprintf("lessons=%d", n), func(b *testing.B) {
			m, queries := benchMemory(b, n)
			ctx := context.Background()
			matched := 0
			for _, q := range queries {
				if len(m.AdjustFor(ctx, "", q)) > 0 {
					matched++
				}
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				m.AdjustFor(ctx, "", queries[i%len(queries)])
				i++
			}
			b.ReportMetric(float64(matched)/float64(len(queries)), "matched/query")
		})
	}
}

func BenchmarkApply(b *testing.B) {
	hits := make([]routing.Hit, 50)
	for i := range hits {
		hits[i] = routing.Hit{Name: fmt.Sprintf("tool_%d", i), Score: 1 - float64(i)/50}
	}
	adj := []Adjustment{{Tool: "tool_30", Delta: 0.3}, {Tool: "tool_2", Delta: -0.5}}
	b.ReportAllocs()
	for b.Loop() {
		Apply(hits, adj)
	}
}

func BenchmarkLearn(b *testing.B) {
	m, _ := benchMemory(b, 1000)
	syn := newSynthetic(11, 3000)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := m.Learn(ctx, Lesson{Query: syn.text(), Tool: "t", Polarity: Use}); err != nil {
			b.Fatal(err)
		}
	}
}
