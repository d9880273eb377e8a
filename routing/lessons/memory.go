package lessons

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcp-router/mcp-router/routing"
	"github.com/mcp-router/mcp-router/routing/internal/vec"
)

// Memory is every lesson of a Store, indexed. It is safe for concurrent
// use: AdjustFor reads, without a lock, an immutable index that each change
// (written through to the store first) replaces.
type Memory struct {
	opts  MemoryOptions
	store Store
	tok   *routing.Tokenizer
	accs  sync.Pool // *accumulator, reused by AdjustFor

	// mu serialises the changes, store writes included, so that the store
	// and the index change in the same order; snap is replaced only with it.
	mu      sync.Mutex
	snap    atomic.Pointer[snapshot]
	version int64 // the store's Version when snap was loaded; guarded by mu

	qmu    sync.Mutex // guards offers (offer.go); never held across I/O
	offers offers
}

// NewMemory loads every lesson of s, deleting the least recently used past
// MaxLessons or MaxBytes. With Embed set each query is embedded (bound ctx);
// after a failure the rest are matched lexically.
func NewMemory(ctx context.Context, s Store, opts MemoryOptions) (*Memory, error) {
	opts.defaults()
	m := &Memory{opts: opts, store: s, tok: routing.NewTokenizer(routing.TokenizerOptions{})}
	m.accs.New = func() any { return &accumulator{toolAt: map[string]int32{}} }
	ver, err := s.Version(ctx)
	if err != nil {
		return nil, fmt.Errorf("loading lessons: %w", err)
	}
	m.version = ver
	all, err := s.All(ctx)
	if err != nil {
		return nil, fmt.Errorf("loading lessons: %w", err)
	}
	vecs := m.embedAll(ctx, all)
	entries := make([]*entry, 0, len(all))
	for i, l := range all {
		entries = append(entries, newEntry(l, m.terms(l.Query), vecs[i]))
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.snap.Store(build(entries))
	var drop []*entry
	if excess := len(entries) - opts.MaxLessons; excess > 0 {
		drop = leastRecentlyUsed(entries, nil, excess)
	}
	if drop = append(drop, m.overBytes(entries, drop, 0)...); len(drop) > 0 {
		deleted, err := m.deleteLocked(ctx, drop)
		m.replaceLocked(deleted, nil)
		if err != nil {
			return nil, fmt.Errorf("loading lessons: evicting: %w", err)
		}
	}
	return m, nil
}

// terms returns the distinct routing terms of q.
func (m *Memory) terms(q string) []string {
	return distinct(m.tok.Tokens(q))
}

// embed returns the unit embedding of text; nil without Embed or on failure.
func (m *Memory) embed(ctx context.Context, text string) []float32 {
	if m.opts.Embed == nil {
		return nil
	}
	v, err := m.opts.Embed(ctx, text)
	if err != nil {
		m.opts.Logger.Warn("lesson not embedded, matched lexically", "query", text, "err", err)
		return nil
	}
	return vec.Unit(slices.Clone(v))
}

// embedAll returns the unit embeddings of the lessons' queries, stopping at
// the first failure.
func (m *Memory) embedAll(ctx context.Context, ls []Lesson) [][]float32 {
	vecs := make([][]float32, len(ls))
	for i, l := range ls {
		if vecs[i] = m.embed(ctx, l.Query); vecs[i] == nil {
			break
		}
	}
	return vecs
}

// now returns the time in UTC without a monotonic reading, as stored.
func (m *Memory) now() time.Time { return m.opts.Now().UTC().Round(0) }

// Learn adds lesson l and returns it as stored. The same principal,
// normalised query, tool and polarity reinforce a lesson (one more use,
// l's note if any, feedback if either is). The other polarity is replaced,
// but a detour does not overrule feedback (ErrOverruled). With Shared, l
// loses its principal. Past MaxPerPrincipal, MaxLessons or MaxBytes the
// least recently used go.
func (m *Memory) Learn(ctx context.Context, l Lesson) (Lesson, error) {
	if err := validate(&l); err != nil {
		return Lesson{}, fmt.Errorf("learning lesson: %w", err)
	}
	if n := lessonBytes(l); n > m.opts.MaxBytes {
		return Lesson{}, fmt.Errorf("learning lesson: %w: %d bytes of query, tool and note, more than the %d all lessons may keep", ErrTooLarge, n, m.opts.MaxBytes)
	}
	if m.opts.Shared {
		l.Principal = ""
	}
	norm := normalize(l.Query)
	k := dedupKey(l.Principal, norm, l.Tool, l.Polarity)
	var vec []float32
	if m.snap.Load().byKey[k] == nil {
		vec = m.embed(ctx, l.Query) // before the lock: it may be slow
	}

	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.syncLocked(ctx); err != nil {
		return Lesson{}, fmt.Errorf("learning lesson: %w", err)
	}
	now := m.now()
	s := m.snap.Load()
	if e := s.byKey[k]; e != nil {
		return m.reinforceLocked(ctx, e, l, now)
	}
	var drop []*entry
	if old := s.byKey[dedupKey(l.Principal, norm, l.Tool, -l.Polarity)]; old != nil {
		if l.Source == SourceDetour && old.lesson.Source == SourceFeedback {
			return Lesson{}, fmt.Errorf("learning lesson: lesson %d, from feedback, says %s %s: %w",
				old.lesson.ID, old.lesson.Polarity, old.lesson.Tool, ErrOverruled)
		}
		drop = append(drop, old)
	}
	drop = append(drop, m.overPrincipal(s.entries, drop, l.Principal)...)
	if excess := len(s.entries) - len(drop) + 1 - m.opts.MaxLessons; excess > 0 {
		drop = append(drop, leastRecentlyUsed(s.entries, drop, excess)...)
	}
	drop = append(drop, m.overBytes(s.entries, drop, lessonBytes(l))...)
	deleted, err := m.deleteLocked(ctx, drop)
	if err != nil {
		m.replaceLocked(deleted, nil)
		return Lesson{}, fmt.Errorf("learning lesson: %w", err)
	}
	l.ID, l.Created, l.LastUsed, l.Uses = 0, now, now, 1
	stored, err := m.store.Put(ctx, l)
	if err != nil {
		m.replaceLocked(deleted, nil)
		return Lesson{}, fmt.Errorf("learning lesson: %w", err)
	}
	m.replaceLocked(deleted, newEntry(stored, m.terms(stored.Query), vec))
	return stored, nil
}

// validate checks l and fills its defaults.
func validate(l *Lesson) error {
	l.Query, l.Tool, l.Note = strings.TrimSpace(l.Query), strings.TrimSpace(l.Tool), strings.TrimSpace(l.Note)
	switch {
	case l.Query == "":
		return errors.New("lesson has no query")
	case l.Tool == "":
		return errors.New("lesson has no tool")
	case l.Polarity != Use && l.Polarity != Avoid:
		return fmt.Errorf("lesson polarity %d: want %d (use) or %d (avoid)", l.Polarity, Use, Avoid)
	}
	switch l.Source {
	case "":
		l.Source = SourceFeedback
	case SourceDetour, SourceFeedback:
	default:
		return fmt.Errorf("lesson source %q: want %q or %q", l.Source, SourceDetour, SourceFeedback)
	}
	return nil
}

// reinforceLocked records that e was taught again by l.
func (m *Memory) reinforceLocked(ctx context.Context, e *entry, l Lesson, now time.Time) (Lesson, error) {
	upd := e.current()
	upd.Uses++
	if now.After(upd.LastUsed) {
		upd.LastUsed = now
	}
	if l.Note != "" {
		upd.Note = l.Note
	}
	if l.Source == SourceFeedback {
		upd.Source = SourceFeedback
	}
	// A longer note may pass MaxBytes: the least recently used others go.
	drop, err := m.deleteLocked(ctx, m.overBytes(m.snap.Load().entries, []*entry{e}, lessonBytes(upd)))
	if err != nil {
		m.replaceLocked(drop, nil)
		return Lesson{}, fmt.Errorf("learning lesson: %w", err)
	}
	stored, err := m.store.Put(ctx, upd)
	if err != nil {
		m.replaceLocked(drop, nil)
		return Lesson{}, fmt.Errorf("learning lesson: reinforcing lesson %d: %w", e.lesson.ID, err)
	}
	m.replaceLocked(append(drop, e), newEntry(stored, e.terms, e.vec))
	return stored, nil
}

// replaceLocked publishes a new index without drop and with add (if any).
func (m *Memory) replaceLocked(drop []*entry, add *entry) {
	if len(drop) == 0 && add == nil {
		return
	}
	cur := m.snap.Load().entries
	next := make([]*entry, 0, len(cur)+1)
	for _, x := range cur {
		if !slices.Contains(drop, x) {
			next = append(next, x)
		}
	}
	if add != nil {
		next = append(next, add)
	}
	m.snap.Store(build(next))
}

// deleteLocked deletes es from the store and returns those deleted (a
// lesson already gone counts), up to the first failure.
func (m *Memory) deleteLocked(ctx context.Context, es []*entry) ([]*entry, error) {
	for i, e := range es {
		if err := m.store.Delete(ctx, e.lesson.ID); err != nil && !errors.Is(err, ErrNotFound) {
			return es[:i], fmt.Errorf("deleting lesson %d: %w", e.lesson.ID, err)
		}
	}
	return es, nil
}

// overPrincipal returns the least recently used lessons of principal, not
// in skip, to remove for one more within MaxPerPrincipal.
func (m *Memory) overPrincipal(entries, skip []*entry, principal string) []*entry {
	if principal == "" {
		return nil
	}
	var own []*entry
	for _, e := range entries {
		if e.lesson.Principal == principal && !slices.Contains(skip, e) {
			own = append(own, e)
		}
	}
	return leastRecentlyUsed(own, nil, max(0, len(own)+1-m.opts.MaxPerPrincipal))
}

// lessonBytes is what MaxBytes counts of l.
func lessonBytes(l Lesson) int { return len(l.Query) + len(l.Tool) + len(l.Note) }

// overBytes returns the least recently used entries not in skip to remove
// for the lessons' bytes, plus extra, to fit MaxBytes.
func (m *Memory) overBytes(entries, skip []*entry, extra int) []*entry {
	need := extra - m.opts.MaxBytes
	for _, e := range entries {
		if !slices.Contains(skip, e) {
			need += lessonBytes(e.lesson)
		}
	}
	if need <= 0 {
		return nil
	}
	lru := leastRecentlyUsed(entries, skip, len(entries))
	for i, e := range lru {
		if need -= lessonBytes(e.lesson); need <= 0 {
			return lru[:i+1]
		}
	}
	return lru
}

// leastRecentlyUsed returns the n least recently used of entries not in
// skip, those of the principal holding most first and shared ones last
// (one principal's teaching never pushes out another's while its own
// remain): by LastUsed, then Created, then ID.
func leastRecentlyUsed(entries, skip []*entry, n int) []*entry {
	var cands []*entry
	held := map[string]int{}
	for _, e := range entries {
		if !slices.Contains(skip, e) {
			cands = append(cands, e)
			held[e.lesson.Principal]++
		}
	}
	held[""] = 0 // shared lessons go last
	slices.SortFunc(cands, func(a, b *entry) int {
		return cmp.Or(cmp.Compare(held[b.lesson.Principal], held[a.lesson.Principal]), cmp.Compare(a.lastUsed.Load(), b.lastUsed.Load()),
			a.lesson.Created.Compare(b.lesson.Created), cmp.Compare(a.lesson.ID, b.lesson.ID))
	})
	return cands[:min(n, len(cands))]
}

// Forget deletes the lesson with id; an unknown id is ErrNotFound.
func (m *Memory) Forget(ctx context.Context, id int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.syncLocked(ctx); err != nil {
		return fmt.Errorf("forgetting lesson %d: %w", id, err)
	}
	e := m.snap.Load().byID[id]
	if e == nil {
		return fmt.Errorf("forgetting lesson %d: %w", id, ErrNotFound)
	}
	if _, err := m.deleteLocked(ctx, []*entry{e}); err != nil {
		return fmt.Errorf("forgetting: %w", err)
	}
	m.replaceLocked([]*entry{e}, nil)
	return nil
}

// Clear deletes every lesson.
func (m *Memory) Clear(ctx context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.store.Clear(ctx); err != nil {
		return fmt.Errorf("clearing lessons: %w", err)
	}
	m.snap.Store(build(nil))
	return nil
}

// List returns every lesson, by ID, with its latest use.
func (m *Memory) List() []Lesson {
	s := m.snap.Load()
	out := make([]Lesson, len(s.entries))
	for i, e := range s.entries {
		out[i] = e.current()
	}
	return out
}

// Len returns the number of lessons.
func (m *Memory) Len() int { return len(m.snap.Load().entries) }

// Flush writes the uses AdjustFor recorded since the last flush to the
// store. Run calls it; call it too before closing the store.
func (m *Memory) Flush(ctx context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.syncLocked(ctx); err != nil {
		return fmt.Errorf("flushing lesson uses: %w", err)
	}
	var dirty []*entry
	var ls []Lesson
	for _, e := range m.snap.Load().entries {
		if e.dirty.Swap(false) {
			dirty, ls = append(dirty, e), append(ls, e.current())
		}
	}
	if len(ls) == 0 {
		return nil
	}
	if err := m.store.PutAll(ctx, ls); err != nil {
		for _, e := range dirty {
			e.dirty.Store(true)
		}
		return fmt.Errorf("flushing the uses of %d lessons: %w", len(ls), err)
	}
	return nil
}

// Sync reloads the lessons when the store's Version says another process
// changed them, keeping the uses not yet flushed.
func (m *Memory) Sync(ctx context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.syncLocked(ctx); err != nil {
		return fmt.Errorf("syncing lessons: %w", err)
	}
	return nil
}

func (m *Memory) syncLocked(ctx context.Context) error {
	ver, err := m.store.Version(ctx)
	if err != nil {
		return err
	}
	if ver == m.version {
		return nil
	}
	all, err := m.store.All(ctx)
	if err != nil {
		return err
	}
	old := m.snap.Load().byID
	entries := make([]*entry, 0, len(all))
	for _, l := range all {
		prev := old[l.ID]
		if prev == nil || prev.lesson.Query != l.Query {
			entries = append(entries, newEntry(l, m.terms(l.Query), m.embed(ctx, l.Query)))
			continue
		}
		e := newEntry(l, prev.terms, prev.vec)
		if prev.dirty.Load() && prev.lastUsed.Load() > e.lastUsed.Load() {
			e.lastUsed.Store(prev.lastUsed.Load())
			e.dirty.Store(true)
		}
		entries = append(entries, e)
	}
	m.snap.Store(build(entries))
	m.version = ver
	return nil
}

// DefaultFlushEvery is Run's flush interval when it is given none.
const DefaultFlushEvery = time.Minute

// Run flushes every interval [DefaultFlushEvery] and syncs every 2s
// until ctx is done, then closes the Memory and flushes one last time.
func (m *Memory) Run(ctx context.Context, every time.Duration) error {
	if every <= 0 {
		every = DefaultFlushEvery
	}
	t := time.NewTicker(every)
	defer t.Stop()
	st := time.NewTicker(syncEvery)
	defer st.Stop()
	for {
		select {
		case <-ctx.Done():
			m.Close()
			return m.Flush(context.WithoutCancel(ctx))
		case <-t.C:
			if err := m.Flush(ctx); err != nil && ctx.Err() == nil {
				m.opts.Logger.Warn("lesson uses not flushed", "err", err)
			}
		case <-st.C:
			if err := m.Sync(ctx); err != nil && ctx.Err() == nil {
				m.opts.Logger.Warn("lessons not reloaded", "err", err)
			}
		}
	}
}
