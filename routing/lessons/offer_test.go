package lessons

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

// heldEmbed is an embedder that blocks each call until release is closed.
type heldEmbed struct{ release chan struct{} }

func (h heldEmbed) Embed(ctx context.Context, text string) ([]float32, error) {
	select {
	case <-h.release:
		return []float32{1, 0, 0}, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func offered(query string) Lesson {
	return Lesson{Query: query, Tool: "weather", Polarity: Use, Source: SourceDetour}
}

// Offer returns while the lesson's embedding is still under way; the
// lesson is in force once learned, and Close waits for that.
func TestOfferDoesNotWaitForTheEmbedding(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := heldEmbed{make(chan struct{})}
		m, s, _ := newMemory(t, MemoryOptions{Embed: h.Embed})
		if !m.Offer(t.Context(), offered("will it rain tomorrow")) {
			t.Fatal("Offer refused the first lesson")
		}
		synctest.Wait() // the worker is blocked in the embedding
		if n := m.Len(); n != 0 {
			t.Errorf("while the embedding is held: %d lessons, want 0", n)
		}
		close(h.release)
		m.Close()
		if n, puts := m.Len(), s.puts; n != 1 || puts != 1 {
			t.Errorf("after Close: %d lessons, %d store writes, want 1 and 1", n, puts)
		}
		if got := deltas(t, m, "will it rain tomorrow")["weather"]; got <= 0 {
			t.Errorf("the offered lesson does not apply: delta %v", got)
		}
	})
}

// A full queue drops the offer at once rather than block the caller.
func TestOfferDropsWhenTheQueueIsFull(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := heldEmbed{make(chan struct{})}
		m, _, _ := newMemory(t, MemoryOptions{Embed: h.Embed, MaxOffered: 1})
		m.Offer(t.Context(), offered("will it rain tomorrow"))
		synctest.Wait() // taken off the queue, held in the embedding
		if !m.Offer(t.Context(), offered("do I need an umbrella")) {
			t.Fatal("Offer refused a lesson with the queue empty")
		}
		if m.Offer(t.Context(), offered("is it sunny")) {
			t.Error("Offer took a lesson past MaxOffered")
		}
		close(h.release)
		m.Close()
		if n := m.Len(); n != 2 {
			t.Errorf("after Close: %d lessons, want the 2 taken", n)
		}
		if d := m.offers.dropped; d != 1 {
			t.Errorf("dropped %d, want 1", d)
		}
	})
}

// Close refuses later offers, and the lessons offered before are learned
// even when their offerer's context has ended.
func TestCloseLearnsWhatWasOfferedAndRefusesMore(t *testing.T) {
	m, _, _ := newMemory(t, MemoryOptions{})
	ctx, cancel := context.WithCancel(t.Context())
	for _, q := range []string{"will it rain tomorrow", "book a flight", "send an email"} {
		m.Offer(ctx, offered(q))
	}
	cancel()
	m.Close()
	if n := m.Len(); n != 3 {
		t.Errorf("after Close: %d lessons, want 3", n)
	}
	if m.Offer(t.Context(), offered("call a taxi")) {
		t.Error("Offer took a lesson after Close")
	}
}

// Run, when its context ends, learns the lessons offered before its last
// flush, so that a gateway that stops loses none.
func TestRunLearnsTheOfferedBeforeItReturns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := heldEmbed{make(chan struct{})}
		m, s, _ := newMemory(t, MemoryOptions{Embed: h.Embed})
		ctx, stop := context.WithCancel(t.Context())
		done := make(chan error)
		go func() { done <- m.Run(ctx, time.Minute) }()
		m.Offer(t.Context(), offered("will it rain tomorrow"))
		synctest.Wait()
		stop()
		synctest.Wait() // Run waits for the held lesson
		select {
		case err := <-done:
			t.Fatalf("Run returned (%v) before the offered lesson was learned", err)
		default:
		}
		close(h.release)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if _, ok := s.lessons[1]; !ok {
			t.Errorf("the offered lesson is not in the store: %v", s.lessons)
		}
	})
}

// An embedding that never answers holds an offered lesson for
// offerTimeout at most: the lesson is then learned lexically, and Close
// returns.
func TestAnOfferedLessonIsBoundedInTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := heldEmbed{make(chan struct{})} // never released
		m, _, _ := newMemory(t, MemoryOptions{Embed: h.Embed})
		start := time.Now()
		m.Offer(t.Context(), offered("will it rain tomorrow"))
		m.Close()
		if d := time.Since(start); d != offerTimeout {
			t.Errorf("Close returned after %v, want offerTimeout (%v)", d, offerTimeout)
		}
		if n := m.Len(); n != 1 {
			t.Errorf("%d lessons, want the offered one, learned without its embedding", n)
		}
	})
}
