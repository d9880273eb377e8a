package lessons

import (
	"context"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"
)

// memStore is an in-memory Store that counts its writes and can be made
// to fail.
type memStore struct {
	mu      sync.Mutex
	seq     int64
	lessons map[int64]Lesson
	puts    int   // Put calls that succeeded
	batches []int // sizes of the PutAll calls that succeeded
	fail    error // returned by every write while set
}

var _ Store = (*memStore)(nil)

func newMemStore() *memStore { return &memStore{lessons: map[int64]Lesson{}} }

func (s *memStore) Put(ctx context.Context, l Lesson) (Lesson, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail != nil {
		return Lesson{}, s.fail
	}
	if l.ID == 0 {
		s.seq++
		l.ID = s.seq
	}
	s.seq = max(s.seq, l.ID)
	s.lessons[l.ID] = l
	s.puts++
	return l, nil
}

func (s *memStore) PutAll(ctx context.Context, ls []Lesson) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail != nil {
		return s.fail
	}
	for _, l := range ls {
		s.lessons[l.ID] = l
	}
	s.batches = append(s.batches, len(ls))
	return nil
}

func (s *memStore) All(ctx context.Context) ([]Lesson, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ids := slices.Sorted(maps.Keys(s.lessons))
	out := make([]Lesson, len(ids))
	for i, id := range ids {
		out[i] = s.lessons[id]
	}
	return out, nil
}

func (s *memStore) Delete(ctx context.Context, id int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail != nil {
		return s.fail
	}
	if _, ok := s.lessons[id]; !ok {
		return ErrNotFound
	}
	delete(s.lessons, id)
	return nil
}

func (s *memStore) Clear(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail != nil {
		return s.fail
	}
	clear(s.lessons)
	return nil
}

// Version never changes: no other process writes a memStore.
func (s *memStore) Version(context.Context) (int64, error) { return 0, nil }

func (s *memStore) Close() error { return nil }

func (s *memStore) ids() []int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Sorted(maps.Keys(s.lessons))
}

func (s *memStore) get(id int64) Lesson {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lessons[id]
}

// clock is a fake clock for MemoryOptions.Now.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

var epoch = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

func newClock() *clock { return &clock{t: epoch} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// newMemory returns a Memory over a fresh memStore with a fake clock.
func newMemory(t *testing.T, opts MemoryOptions) (*Memory, *memStore, *clock) {
	t.Helper()
	s, c := newMemStore(), newClock()
	if opts.Now == nil {
		opts.Now = c.Now
	}
	m, err := NewMemory(t.Context(), s, opts)
	if err != nil {
		t.Fatalf("NewMemory: %v", err)
	}
	return m, s, c
}

// learn teaches m a lesson, failing t on error.
func learn(t *testing.T, m *Memory, query, tool string, p Polarity) Lesson {
	t.Helper()
	l, err := m.Learn(t.Context(), Lesson{Query: query, Tool: tool, Polarity: p})
	if err != nil {
		t.Fatalf("Learn(%q, %s, %s): %v", query, tool, p, err)
	}
	return l
}

// deltas returns Adjust's deltas by tool.
func deltas(t *testing.T, m *Memory, query string) map[string]float64 {
	out := map[string]float64{}
	for _, a := range m.AdjustFor(t.Context(), "", query) {
		out[a.Tool] = a.Delta
	}
	return out
}

func (s *memStore) batchSizes() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.batches)
}

func (s *memStore) setFail(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fail = err
}
