package lessons

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestRunFlushesPeriodicallyAndOnStop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newMemStore()
		m, err := NewMemory(t.Context(), s, MemoryOptions{})
		if err != nil {
			t.Fatal(err)
		}
		learn(t, m, "weather paris", "weather", Use)
		learn(t, m, "book flight", "flights", Use)
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- m.Run(ctx, time.Minute) }()

		time.Sleep(time.Second) // fake time: a use a second after learning
		m.AdjustFor(t.Context(), "", "weather paris")
		m.AdjustFor(t.Context(), "", "book flight")
		synctest.Wait()
		if len(s.batchSizes()) != 0 {
			t.Errorf("flushed before the interval: %v", s.batchSizes())
		}
		time.Sleep(time.Minute)
		synctest.Wait()
		if !cmp.Equal(s.batchSizes(), []int{2}) {
			t.Errorf("after one interval: batches %v, want one of 2", s.batchSizes())
		}

		time.Sleep(time.Second)
		m.AdjustFor(t.Context(), "", "weather paris")
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
		if !cmp.Equal(s.batchSizes(), []int{2, 1}) {
			t.Errorf("after stopping: batches %v, want the last use flushed too", s.batchSizes())
		}
	})
}

func TestRunReturnsTheLastFlushError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newMemStore()
		m, err := NewMemory(t.Context(), s, MemoryOptions{})
		if err != nil {
			t.Fatal(err)
		}
		learn(t, m, "weather paris", "weather", Use)
		time.Sleep(time.Second)
		m.AdjustFor(t.Context(), "", "weather paris")
		s.setFail(errors.New("disk full"))
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		if err := m.Run(ctx, time.Minute); err == nil {
			t.Error("Run: got no error, want the final flush's")
		}
	})
}
