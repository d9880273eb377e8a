package state

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/mcp-router/mcp-router/audit"
	"github.com/mcp-router/mcp-router/proxy/integrity"
	"github.com/mcp-router/mcp-router/routing"
	"github.com/mcp-router/mcp-router/routing/lessons"
)

// Memory is the state held in memory for one run, with the same behaviour
// as the database: for a state directory that cannot be written, and for
// tests. It is safe for concurrent use.
type Memory struct {
	mu       sync.Mutex
	lessons  map[int64]lessons.Lesson
	seq      int64 // last lesson ID assigned
	version  int64 // lessons changed
	pins     integrity.Pins
	vectors  map[string]map[vecKey][]float32 // by model
	gateways map[string]Gateway
	audit    []audit.Record // oldest first
	auditMax int
	creds    map[[2]string][]byte     // sealed upstream credentials by upstream and subject
	quotas   map[string]quotaCount    // by key
	ended    map[[32]byte]endedRecord // ended sessions by their hashes
}

// NewMemory returns empty state.
func NewMemory() *Memory {
	return &Memory{lessons: map[int64]lessons.Lesson{}, pins: integrity.Pins{},
		vectors: map[string]map[vecKey][]float32{}, gateways: map[string]Gateway{}, auditMax: audit.MaxRows}
}

// Lessons returns the lessons.Store in memory.
func (m *Memory) Lessons() lessons.Store { return memLessons{m} }

// Pins returns the integrity.PinStore in memory.
func (m *Memory) Pins() integrity.PinStore { return memPins{m} }

// Vectors returns the routing.VectorStore in memory.
func (m *Memory) Vectors() routing.VectorStore { return memVectors{m} }

// Gateways returns the Registry in memory.
func (m *Memory) Gateways() Registry { return memGateways{m} }

// Audit returns the audit.Store in memory.
func (m *Memory) Audit() audit.Store { return memAudit{m} }

// Close does nothing.
func (m *Memory) Close() error { return nil }

type memLessons struct{ m *Memory }

func (s memLessons) Put(ctx context.Context, l lessons.Lesson) (lessons.Lesson, error) {
	if err := ctx.Err(); err != nil {
		return lessons.Lesson{}, fmt.Errorf("putting lesson: %w", err)
	}
	s.m.mu.Lock()
	defer s.m.mu.Unlock()
	if err := s.m.putLocked(&l); err != nil {
		return lessons.Lesson{}, fmt.Errorf("putting lesson: %w", err)
	}
	s.m.version++
	return l, nil
}

func (m *Memory) putLocked(l *lessons.Lesson) error {
	if l.ID < 0 {
		return fmt.Errorf("negative lesson ID %d", l.ID)
	}
	if l.ID == 0 {
		m.seq++
		l.ID = m.seq
	}
	m.seq = max(m.seq, l.ID)
	m.lessons[l.ID] = *l
	return nil
}

func (s memLessons) PutAll(ctx context.Context, ls []lessons.Lesson) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("putting lessons: %w", err)
	}
	s.m.mu.Lock()
	defer s.m.mu.Unlock()
	for _, l := range ls {
		if l.ID == 0 {
			return errors.New("putting lessons: lesson without an ID")
		}
		if l.ID < 0 {
			return fmt.Errorf("putting lessons: negative lesson ID %d", l.ID)
		}
	}
	for _, l := range ls {
		_ = s.m.putLocked(&l) // checked above
	}
	s.m.version++
	return nil
}

func (s memLessons) All(ctx context.Context) ([]lessons.Lesson, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("reading lessons: %w", err)
	}
	s.m.mu.Lock()
	defer s.m.mu.Unlock()
	out := slices.Collect(maps.Values(s.m.lessons))
	slices.SortFunc(out, func(a, b lessons.Lesson) int { return cmp.Compare(a.ID, b.ID) })
	return out, nil
}

func (s memLessons) Delete(ctx context.Context, id int64) error {
	s.m.mu.Lock()
	defer s.m.mu.Unlock()
	if _, ok := s.m.lessons[id]; !ok {
		return fmt.Errorf("deleting lesson %d: %w", id, lessons.ErrNotFound)
	}
	delete(s.m.lessons, id)
	s.m.version++
	return nil
}

func (s memLessons) Clear(ctx context.Context) error {
	s.m.mu.Lock()
	defer s.m.mu.Unlock()
	clear(s.m.lessons)
	s.m.version++
	return nil
}

func (s memLessons) Version(ctx context.Context) (int64, error) {
	s.m.mu.Lock()
	defer s.m.mu.Unlock()
	return s.m.version, nil
}

func (s memLessons) Close() error { return nil }

type memPins struct{ m *Memory }

func (s memPins) UpdatePins(change func(integrity.Pins) bool) error {
	s.m.mu.Lock()
	defer s.m.mu.Unlock()
	set := s.m.pins.Clone()
	if change(set) {
		s.m.pins = set.Clone() // the caller keeps set
	}
	return nil
}

type memVectors struct{ m *Memory }

func (s memVectors) LoadVectors(model string) (map[vecKey][]float32, error) {
	s.m.mu.Lock()
	defer s.m.mu.Unlock()
	return maps.Clone(s.m.vectors[model]), nil
}

func (s memVectors) SaveVectors(model string, vecs map[vecKey][]float32) error {
	if len(vecs) == 0 {
		return nil
	}
	s.m.mu.Lock()
	defer s.m.mu.Unlock()
	var dims int
	for _, v := range vecs {
		dims = len(v)
		break
	}
	have := s.m.vectors[model]
	if have == nil {
		have = map[vecKey][]float32{}
		s.m.vectors[model] = have
	}
	maps.DeleteFunc(have, func(_ vecKey, v []float32) bool { return len(v) != dims })
	for k, v := range vecs {
		have[k] = slices.Clone(v)
	}
	return nil
}

type memGateways struct{ m *Memory }

func (s memGateways) Beat(ctx context.Context, g Gateway) error {
	if err := checkGateway(g); err != nil {
		return err
	}
	s.m.mu.Lock()
	defer s.m.mu.Unlock()
	g.Snapshot = slices.Clone(g.Snapshot)
	s.m.gateways[g.ID] = g
	return nil
}

func (s memGateways) Remove(ctx context.Context, ids ...string) error {
	s.m.mu.Lock()
	defer s.m.mu.Unlock()
	for _, id := range ids {
		delete(s.m.gateways, id)
	}
	return nil
}

func (s memGateways) Gateways(ctx context.Context) ([]Gateway, error) {
	s.m.mu.Lock()
	defer s.m.mu.Unlock()
	out := slices.Collect(maps.Values(s.m.gateways))
	slices.SortFunc(out, func(a, b Gateway) int { return cmp.Or(a.Started.Compare(b.Started), cmp.Compare(a.ID, b.ID)) })
	return out, nil
}
