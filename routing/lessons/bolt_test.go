package lessons

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func openBolt(t *testing.T, path string) *BoltStore {
	t.Helper()
	s, err := OpenBolt(path)
	if err != nil {
		t.Fatalf("OpenBolt: %v", err)
	}
	return s
}

func TestOpenBoltCreatesPrivateFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state", "nested", "lessons.db")
	s := openBolt(t, path)
	defer s.Close()
	for _, tc := range []struct {
		path string
		want os.FileMode
	}{{filepath.Dir(path), 0o700}, {path, 0o600}} {
		fi, err := os.Stat(tc.path)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != tc.want {
			t.Errorf("%s: mode %v, want %v", tc.path, got, tc.want)
		}
	}
}

func TestOpenBoltInUse(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lessons.db")
	s := openBolt(t, path)
	start := time.Now()
	_, err := OpenBolt(path)
	took := time.Since(start)
	if !errors.Is(err, ErrInUse) || !strings.Contains(err.Error(), path) {
		t.Errorf("second OpenBolt: got %v, want ErrInUse naming %s", err, path)
	}
	if took > 3*time.Second {
		t.Errorf("second OpenBolt took %v, want a quick failure", took)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	openBolt(t, path).Close() // free again
}

func TestOpenBoltErrorsNameTheFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "not-a-db")
	if err := os.WriteFile(path, []byte("this is not a bbolt file, not at all, no"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenBolt(path); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("OpenBolt on garbage: got %v, want an error naming %s", err, path)
	}
}

func TestBoltStoreRoundTrip(t *testing.T) {
	s := openBolt(t, filepath.Join(t.TempDir(), "lessons.db"))
	defer s.Close()
	ctx := t.Context()
	a, err := s.Put(ctx, Lesson{Query: "weather paris", Tool: "weather", Polarity: Use, Source: SourceDetour, Created: epoch, LastUsed: epoch, Uses: 1})
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.Put(ctx, Lesson{Query: "query logs", Tool: "ha_get_logs", Polarity: Avoid, Source: SourceFeedback, Note: "system logs", Created: epoch, LastUsed: epoch, Uses: 3})
	if err != nil {
		t.Fatal(err)
	}
	if a.ID != 1 || b.ID != 2 {
		t.Errorf("assigned IDs %d, %d, want 1, 2", a.ID, b.ID)
	}
	b.Uses = 4
	if err := s.PutAll(ctx, []Lesson{b}); err != nil {
		t.Fatal(err)
	}
	got, err := s.All(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]Lesson{a, b}, got); diff != "" {
		t.Errorf("All (-want +got):\n%s", diff)
	}
	if err := s.Delete(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, a.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("Delete again: got %v, want ErrNotFound", err)
	}
	if err := s.Clear(ctx); err != nil {
		t.Fatal(err)
	}
	c, err := s.Put(ctx, Lesson{Query: "q", Tool: "t", Polarity: Use})
	if err != nil {
		t.Fatal(err)
	}
	if c.ID != 3 {
		t.Errorf("ID after Clear: %d, want 3 (IDs are not reused)", c.ID)
	}
}

func TestPersistenceAcrossReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lessons.db")
	c := newClock()
	opts := MemoryOptions{Now: c.Now}
	queries := []string{"show the weather forecast for Paris tomorrow", "query the system logs", "book a flight to Rome"}

	s := openBolt(t, path)
	m, err := NewMemory(t.Context(), s, opts)
	if err != nil {
		t.Fatal(err)
	}
	learn(t, m, queries[0], "weather_forecast", Use)
	learn(t, m, queries[1], "ha_get_logs", Avoid)
	learn(t, m, queries[2], "flights_book", Use)
	c.Advance(10 * 24 * time.Hour)
	m.Adjust(t.Context(), queries[0]) // a use, to be flushed
	c.Advance(10 * 24 * time.Hour)
	for _, q := range queries {
		m.Adjust(t.Context(), q+" please") // uses at the same time: flushed below
	}
	if err := m.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	before := m.List()
	var adjBefore [][]Adjustment
	for _, q := range queries {
		adjBefore = append(adjBefore, m.Adjust(t.Context(), q+" please"))
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s = openBolt(t, path)
	defer s.Close()
	m, err = NewMemory(t.Context(), s, opts)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(before, m.List()); diff != "" {
		t.Errorf("lessons after reopening (-before +after):\n%s", diff)
	}
	for i, q := range queries {
		if diff := cmp.Diff(adjBefore[i], m.Adjust(t.Context(), q+" please"), approx); diff != "" {
			t.Errorf("Adjust(%q) after reopening (-before +after):\n%s", q, diff)
		}
	}
	if len(adjBefore[0]) != 1 || len(adjBefore[1]) != 1 || adjBefore[1][0].Delta >= 0 {
		t.Errorf("adjustments %+v: want one boost and one penalty among them", adjBefore)
	}
}
