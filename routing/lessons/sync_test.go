package lessons

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// sharedStore is a memStore that counts its writes as Version, as a store
// that several processes share does.
type sharedStore struct {
	*memStore
	version atomic.Int64
}

func newSharedStore() *sharedStore { return &sharedStore{memStore: newMemStore()} }

func (s *sharedStore) Version(context.Context) (int64, error) { return s.version.Load(), nil }

func (s *sharedStore) Put(ctx context.Context, l Lesson) (Lesson, error) {
	defer s.version.Add(1)
	return s.memStore.Put(ctx, l)
}

func (s *sharedStore) PutAll(ctx context.Context, ls []Lesson) error {
	defer s.version.Add(1)
	return s.memStore.PutAll(ctx, ls)
}

func (s *sharedStore) Delete(ctx context.Context, id int64) error {
	defer s.version.Add(1)
	return s.memStore.Delete(ctx, id)
}

func (s *sharedStore) Clear(ctx context.Context) error {
	defer s.version.Add(1)
	return s.memStore.Clear(ctx)
}

// twoMemories returns two Memories over one shared store: two gateways.
func twoMemories(t *testing.T, opts MemoryOptions) (a, b *Memory, s *sharedStore) {
	t.Helper()
	s = newSharedStore()
	var err error
	if a, err = NewMemory(t.Context(), s, opts); err != nil {
		t.Fatal(err)
	}
	if b, err = NewMemory(t.Context(), s, opts); err != nil {
		t.Fatal(err)
	}
	return a, b, s
}

func TestSyncLoadsWhatAnotherMemoryLearned(t *testing.T) {
	a, b, _ := twoMemories(t, MemoryOptions{})
	learn(t, a, "split the restaurant bill", "calculator_divide", Use)
	if b.Len() != 0 {
		t.Fatalf("b has %d lessons before syncing", b.Len())
	}
	if err := b.Sync(t.Context()); err != nil {
		t.Fatal(err)
	}
	if d := deltas(t, b, "split the restaurant bill")["calculator_divide"]; d <= 0 {
		t.Errorf("after syncing, b's delta for the taught tool is %v, want a boost", d)
	}
}

func TestLearnReinforcesTheLessonAnotherMemoryTaught(t *testing.T) {
	a, b, _ := twoMemories(t, MemoryOptions{})
	first := learn(t, a, "split the restaurant bill", "calculator_divide", Use)
	again := learn(t, b, "Split the  restaurant bill", "calculator_divide", Use)
	if again.ID != first.ID || again.Uses != 2 {
		t.Errorf("b learned %+v, want lesson %d taught a second time", again, first.ID)
	}
}

func TestForgetSeesAnotherMemorysLesson(t *testing.T) {
	a, b, s := twoMemories(t, MemoryOptions{})
	l := learn(t, a, "weather in paris", "weather", Use)
	if err := b.Forget(t.Context(), l.ID); err != nil {
		t.Fatalf("b forgetting a's lesson: %v", err)
	}
	if len(s.ids()) != 0 {
		t.Errorf("store keeps %v", s.ids())
	}
}

// A use recorded in one Memory and not flushed yet survives a reload
// caused by another Memory's write, and its flush keeps the other's
// change.
func TestSyncKeepsUnflushedUses(t *testing.T) {
	c := newClock()
	a, b, s := twoMemories(t, MemoryOptions{Now: c.Now})
	l := learn(t, a, "weather in paris", "weather", Use)
	b.Sync(t.Context())
	c.Advance(time.Hour)
	b.AdjustFor(t.Context(), "", "weather in paris") // a use, in b only
	learn(t, a, "weather in paris", "weather", Use)
	if err := b.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	got := s.get(l.ID)
	if got.Uses != 2 || !got.LastUsed.Equal(epoch.Add(time.Hour)) {
		t.Errorf("after b's flush: uses %d, last used %v; want a's 2 uses and b's use at %v", got.Uses, got.LastUsed, epoch.Add(time.Hour))
	}
}

func TestRunSyncsEverySyncEvery(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, b, _ := twoMemories(t, MemoryOptions{}) // syncEvery: 2s
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- b.Run(ctx, time.Minute) }()
		learn(t, a, "weather in paris", "weather", Use)
		time.Sleep(time.Second)
		synctest.Wait()
		if b.Len() != 0 {
			t.Errorf("b reloaded before syncEvery")
		}
		time.Sleep(time.Second)
		synctest.Wait()
		if b.Len() != 1 {
			t.Errorf("after syncEvery b has %d lessons, want a's 1", b.Len())
		}
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
}
