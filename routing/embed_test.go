package routing

import (
	"bytes"
	"context"
	"crypto/sha256"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
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
	normalizeVec(v)
	return v
}

func TestEmbedNormalizeAndDot(t *testing.T) {
	v := []float32{3, 4}
	normalizeVec(v)
	if diff := cmp.Diff([]float32{0.6, 0.8}, v); diff != "" {
		t.Errorf("normalize (-want +got):\n%s", diff)
	}
	zero := []float32{0, 0}
	normalizeVec(zero)
	if zero[0] != 0 || zero[1] != 0 {
		t.Errorf("normalizeVec(zero): got %v, want zeros", zero)
	}
	a := unitVec(10, 3)
	if got := dotVec(a, a); math.Abs(got-1) > 1e-6 {
		t.Errorf("dotVec(a, a): got %v, want 1", got)
	}
	if got := dotVec(a, []float32{1}); got != 0 {
		t.Errorf("dot of different lengths: got %v, want 0", got)
	}
}

func TestEmbedCacheRoundTrip(t *testing.T) {
	dir := t.TempDir()
	c := newVectorCache(dir, "nomic-embed-text", nil)
	keys := []vecKey{c.key("read file"), c.key("get weather")}
	vecs := [][]float32{unitVec(8, 1), unitVec(8, 2)}
	if got := c.get(keys); got[0] != nil || got[1] != nil {
		t.Fatalf("empty cache: got %v, want misses", got)
	}
	if err := c.put(keys, vecs); err != nil {
		t.Fatal(err)
	}
	fresh := newVectorCache(dir, "nomic-embed-text", nil)
	if diff := cmp.Diff(vecs, fresh.get(keys)); diff != "" {
		t.Errorf("reloaded vectors (-want +got):\n%s", diff)
	}
	if c.key("read file") == newVectorCache(dir, "other", nil).key("read file") {
		t.Error("two models give one key for the same text")
	}
	want := sha256.Sum256([]byte("nomic-embed-text\x00read file"))
	if keys[0] != want {
		t.Errorf("key: got %x, want sha256(model NUL text) %x", keys[0], want)
	}
}

func TestEmbedCacheModelDirs(t *testing.T) {
	seen := map[string]string{}
	for _, m := range []string{"nomic-embed-text", "nomic-embed-text:latest", "org/model:Q4", "../../etc", ""} {
		d := cacheModelDir(m)
		if strings.ContainsAny(d, `/\:`) || d == ".." || d == "." {
			t.Errorf("cacheModelDir(%q) = %q: not a plain directory name", m, d)
		}
		if other, ok := seen[d]; ok {
			t.Errorf("cacheModelDir(%q) = cacheModelDir(%q) = %q", m, other, d)
		}
		seen[d] = m
	}
}

func TestEmbedCacheDimensionChangeDropsOldVectors(t *testing.T) {
	c := newVectorCache(t.TempDir(), "m", nil)
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

func TestEmbedCacheCorruptFileIgnored(t *testing.T) {
	good := encodeVectors("m", 4, map[vecKey][]float32{{1}: unitVec(4, 0), {2}: unitVec(4, 1)})
	flipped := bytes.Clone(good)
	flipped[len(flipped)/2] ^= 0xff
	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"garbage", []byte("not a cache at all, just some text that is long enough")},
		{"empty", nil},
		{"flipped byte", flipped},
		{"truncated", good[:len(good)-7]},
		{"other model", encodeVectors("other", 4, map[vecKey][]float32{{1}: unitVec(4, 0)})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, cacheModelDir("m"), cacheFile)
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, tc.data, 0o600); err != nil {
				t.Fatal(err)
			}
			logs := &slogRecorder{}
			c := newVectorCache(dir, "m", slog.New(logs))
			if got := c.get([]vecKey{{1}, {2}}); got[0] != nil || got[1] != nil {
				t.Errorf("got %v, want misses", got)
			}
			c.get([]vecKey{{1}})
			if got := logs.count(slog.LevelWarn); got != 1 {
				t.Errorf("got %d warnings, want 1", got)
			}
			// The next write replaces the bad file with a good one.
			if err := c.put([]vecKey{{3}}, [][]float32{unitVec(4, 2)}); err != nil {
				t.Fatal(err)
			}
			if got := newVectorCache(dir, "m", nil).get([]vecKey{{3}})[0]; got == nil {
				t.Error("after a write: got a miss, want the vector")
			}
		})
	}
}

func TestEmbedCacheWriteLeavesNoTempFiles(t *testing.T) {
	dir := t.TempDir()
	c := newVectorCache(dir, "m", nil)
	for i := range 3 {
		if err := c.put([]vecKey{{byte(i)}}, [][]float32{unitVec(4, i)}); err != nil {
			t.Fatal(err)
		}
	}
	entries, err := os.ReadDir(filepath.Join(dir, cacheModelDir("m")))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != cacheFile {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("cache directory holds %v, want only %s", names, cacheFile)
	}
}

// bigCache returns the encoding of n random-ish vectors of dims dimensions.
func bigVectorCache(n, dims int) []byte {
	vecs := make(map[vecKey][]float32, n)
	for i := range n {
		var k vecKey
		k[0], k[1], k[2] = byte(i), byte(i>>8), byte(i>>16)
		vecs[k] = unitVec(dims, i)
	}
	return encodeVectors("m", dims, vecs)
}

func TestEmbedCacheLoads10kTools(t *testing.T) {
	data := bigVectorCache(10000, 64)
	dims, vecs, err := decodeVectors(data, "m")
	if err != nil || dims != 64 || len(vecs) != 10000 {
		t.Fatalf("got %d dims, %d vectors, %v; want 64, 10000, nil", dims, len(vecs), err)
	}
}

// BenchmarkEmbedCacheLoad decodes a cache of 10k tools at 768 dimensions,
// the work of the first SetUpstream after a restart.
func BenchmarkEmbedCacheLoad(b *testing.B) {
	data := bigVectorCache(10000, 768)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, _, err := decodeVectors(data, "m"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEmbedDot768(b *testing.B) {
	x, y := unitVec(768, 1), unitVec(768, 2)
	for b.Loop() {
		dotVec(x, y)
	}
}
