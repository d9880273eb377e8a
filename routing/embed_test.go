package routing

import (
	"context"
	"crypto/sha256"
	"errors"
	"log/slog"
	"maps"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcp-router/mcp-router/routing/internal/vec"
)

// slogRecorder is a slog handler that keeps the records it gets.
type slogRecorder struct {
	mu      sync.Mutex
	records []slog.Record
}

func (r *slogRecorder) Enabled(context.Context, slog.Level) bool { return true }
func (r *slogRecorder) WithAttrs([]slog.Attr) slog.Handler       { return r }
func (r *slogRecorder) WithGroup(string) slog.Handler            { return r }
func (r *slogRecorder) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.records = append(r.records, rec)
	return nil
}

// count returns the number of records at level.
func (r *slogRecorder) count(level slog.Level) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, rec := range r.records {
		if rec.Level == level {
			n++
		}
	}
	return n
}

// messages returns the messages of the records at level.
func (r *slogRecorder) messages(level slog.Level) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, rec := range r.records {
		if rec.Level == level {
			out = append(out, rec.Message)
		}
	}
	return out
}

// unit returns a unit vector of dims dimensions pointing mostly along axis.
func unitVec(dims, axis int) []float32 {
	v := make([]float32, dims)
	for i := range v {
		v[i] = 0.01 * float32(i%7)
	}
	v[axis%dims] = 1
	vec.Unit(v)
	return v
}

// memVectors is a VectorStore in memory. While loadErr (saveErr) is set,
// LoadVectors (SaveVectors) fails with it.
type memVectors struct {
	mu      sync.Mutex
	models  map[string]map[vecKey][]float32
	loadErr error
	saveErr error
}

var _ VectorStore = (*memVectors)(nil)

func (m *memVectors) LoadVectors(model string) (map[vecKey][]float32, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.loadErr != nil {
		return nil, m.loadErr
	}
	return maps.Clone(m.models[model]), nil
}

func (m *memVectors) SaveVectors(model string, vecs map[vecKey][]float32) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.saveErr != nil {
		return m.saveErr
	}
	if m.models == nil {
		m.models = map[string]map[vecKey][]float32{}
	}
	all := m.models[model]
	for _, v := range vecs {
		maps.DeleteFunc(all, func(_ vecKey, old []float32) bool { return len(old) != len(v) })
		break
	}
	if all == nil {
		all = map[vecKey][]float32{}
	}
	maps.Copy(all, vecs)
	m.models[model] = all
	return nil
}

func TestEmbedCacheRoundTrip(t *testing.T) {
	store := &memVectors{}
	c := newStoreCache(store, "nomic-embed-text", nil)
	keys := []vecKey{c.key("read file"), c.key("get weather")}
	vecs := [][]float32{unitVec(8, 1), unitVec(8, 2)}
	if got := c.get(keys); got[0] != nil || got[1] != nil {
		t.Fatalf("empty cache: got %v, want misses", got)
	}
	if err := c.put(keys, vecs); err != nil {
		t.Fatal(err)
	}
	fresh := newStoreCache(store, "nomic-embed-text", nil)
	if diff := cmp.Diff(vecs, fresh.get(keys)); diff != "" {
		t.Errorf("reloaded vectors (-want +got):\n%s", diff)
	}
	if c.key("read file") == newStoreCache(store, "other", nil).key("read file") {
		t.Error("two models give one key for the same text")
	}
	want := sha256.Sum256([]byte("nomic-embed-text\x00read file"))
	if keys[0] != want {
		t.Errorf("key: got %x, want sha256(model NUL text) %x", keys[0], want)
	}
}

func TestEmbedCacheDimensionChangeDropsOldVectors(t *testing.T) {
	c := newStoreCache(&memVectors{}, "m", nil)
	old := c.key("old")
	if err := c.put([]vecKey{old}, [][]float32{unitVec(8, 1)}); err != nil {
		t.Fatal(err)
	}
	if err := c.put([]vecKey{c.key("new")}, [][]float32{unitVec(4, 1)}); err != nil {
		t.Fatal(err)
	}
	if got := c.get([]vecKey{old})[0]; got != nil {
		t.Errorf("vector of the old dimension: got %v, want dropped", got)
	}
}

// A store that cannot be read is an empty cache, with one warning; the
// vectors put then are still saved.
func TestEmbedCacheUnreadableStoreIgnored(t *testing.T) {
	store := &memVectors{}
	if err := store.SaveVectors("m", map[vecKey][]float32{{1}: unitVec(4, 0), {2}: unitVec(4, 1)}); err != nil {
		t.Fatal(err)
	}
	store.loadErr = errors.New("database disk image is malformed")
	logs := &slogRecorder{}
	c := newStoreCache(store, "m", slog.New(logs))
	if got := c.get([]vecKey{{1}, {2}}); got[0] != nil || got[1] != nil {
		t.Errorf("got %v, want misses", got)
	}
	c.get([]vecKey{{1}})
	if got := logs.count(slog.LevelWarn); got != 1 {
		t.Errorf("got %d warnings, want 1", got)
	}
	if err := c.put([]vecKey{{3}}, [][]float32{unitVec(4, 2)}); err != nil {
		t.Fatal(err)
	}
	store.loadErr = nil
	if got := newStoreCache(store, "m", nil).get([]vecKey{{3}})[0]; got == nil {
		t.Error("after a write: got a miss, want the vector")
	}
}
