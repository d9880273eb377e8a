package lessons

import (
	"context"
	"errors"
	"math"
	"sync/atomic"
	"testing"
	"time"
)

// fakeEmbed maps texts to fixed vectors: the two rain phrasings are one
// direction, the shopping phrase is at cosine 0.4 from them (below the
// floor), anything else is orthogonal to both.
type fakeEmbed struct {
	calls atomic.Int64
	fail  atomic.Bool
}

func (f *fakeEmbed) Embed(ctx context.Context, text string) ([]float32, error) {
	f.calls.Add(1)
	if f.fail.Load() {
		return nil, errors.New("embedder down")
	}
	switch text {
	case "will it rain tomorrow", "do I need an umbrella":
		return []float32{2, 0, 0}, nil // not unit: Memory normalises
	case "buy a raincoat":
		return []float32{0.4, float32(math.Sqrt(1 - 0.16)), 0}, nil
	}
	return []float32{0, 0, 1}, nil
}

func TestEmbedSimilarity(t *testing.T) {
	tests := []struct {
		name  string
		query string
		fail  bool
		want  float64 // weather delta; 0 for none
	}{
		{"embedding-close, lexically unrelated", "do I need an umbrella", false, 0.3},
		{"cosine below the floor", "buy a raincoat", false, 0},
		{"unrelated", "send an email", false, 0},
		{"embedder down: lexical only", "do I need an umbrella", true, 0},
		{"embedder down, lexical match", "will it rain tomorrow", true, 0.3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeEmbed{}
			m, _, _ := newMemory(t, MemoryOptions{Embed: f.Embed})
			learn(t, m, "will it rain tomorrow", "weather", Use)
			f.fail.Store(tc.fail)
			got := deltas(t, m, tc.query)["weather"]
			if math.Abs(got-tc.want) > eps {
				t.Errorf("Adjust(%q): weather delta %v, want %v", tc.query, got, tc.want)
			}
			if f.calls.Load() != 2 {
				t.Errorf("Embed called %d times, want 2 (the lesson, the query)", f.calls.Load())
			}
		})
	}
}

func TestEmbedNotCalledWithoutEmbeddedLessons(t *testing.T) {
	f := &fakeEmbed{}
	f.fail.Store(true)
	m, _, _ := newMemory(t, MemoryOptions{Embed: f.Embed})
	learn(t, m, "will it rain tomorrow", "weather", Use) // embedding fails: lexical only
	if got := deltas(t, m, "will it rain tomorrow")["weather"]; math.Abs(got-0.3) > eps {
		t.Errorf("lexical match of a lesson without embedding: delta %v, want 0.3", got)
	}
	if f.calls.Load() != 1 {
		t.Errorf("Embed called %d times, want 1: no lesson has a vector, so queries need none", f.calls.Load())
	}
}

func TestNewMemoryEmbedsLessons(t *testing.T) {
	s := newMemStore()
	for _, q := range []string{"will it rain tomorrow", "book a flight", "send an email"} {
		s.Put(t.Context(), Lesson{ID: 0, Query: q, Tool: "weather", Polarity: Use, Source: SourceFeedback, Created: epoch, LastUsed: epoch, Uses: 1})
	}
	tests := []struct {
		name      string
		fail      bool
		wantCalls int64   // Embed calls by NewMemory and one Adjust
		want      float64 // delta of the embedding-close query
	}{
		{"embedder up", false, 3 + 1, 0.3},
		{"embedder down: one try, lexical only", true, 1, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeEmbed{}
			f.fail.Store(tc.fail)
			m, err := NewMemory(t.Context(), s, MemoryOptions{Embed: f.Embed, Now: func() time.Time { return epoch }})
			if err != nil {
				t.Fatal(err)
			}
			if got := deltas(t, m, "do I need an umbrella")["weather"]; math.Abs(got-tc.want) > eps {
				t.Errorf("delta %v, want %v", got, tc.want)
			}
			if got := f.calls.Load(); got != tc.wantCalls {
				t.Errorf("Embed called %d times, want %d", got, tc.wantCalls)
			}
		})
	}
}
