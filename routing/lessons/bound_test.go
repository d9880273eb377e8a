package lessons

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestBoundLessonsBytes: the lessons' text stays within MaxBytes. At the
// limit nothing is evicted; one byte over evicts the least recently used;
// a lesson larger than the limit alone is refused.
func TestBoundLessonsBytes(t *testing.T) {
	// Each lesson is 10 bytes of query and 4 of tool: 14.
	const each = 14
	m, s, c := newMemory(t, MemoryOptions{MaxBytes: 3 * each})
	a := learn(t, m, "weather pa", "tool", Use)
	c.Advance(time.Hour)
	b := learn(t, m, "book fligh", "tool", Use)
	c.Advance(time.Hour)
	d := learn(t, m, "send email", "tool", Use)
	if got, want := ids(m.List()), []int64{a.ID, b.ID, d.ID}; !cmp.Equal(got, want) {
		t.Fatalf("at the limit: lessons %v, want all %v", got, want)
	}
	c.Advance(time.Hour)
	e := learn(t, m, "play music", "t", Use) // 11 bytes: a goes
	if got, want := ids(m.List()), []int64{b.ID, d.ID, e.ID}; !cmp.Equal(got, want) {
		t.Errorf("over the limit: lessons %v, want %v (lesson %d least recently used)", got, want, a.ID)
	}
	if got, want := s.ids(), []int64{b.ID, d.ID, e.ID}; !cmp.Equal(got, want) {
		t.Errorf("store over the limit: lessons %v, want %v", got, want)
	}
	// A longer note on reinforcing passes the limit too: b, now least
	// recently used, goes.
	c.Advance(time.Hour)
	if _, err := m.Learn(t.Context(), Lesson{Query: "send email", Tool: "tool", Polarity: Use, Note: "xxxxxxxxxx"}); err != nil {
		t.Fatal(err)
	}
	if got, want := ids(m.List()), []int64{d.ID, e.ID}; !cmp.Equal(got, want) {
		t.Errorf("after a longer note: lessons %v, want %v", got, want)
	}
	_, err := m.Learn(t.Context(), Lesson{Query: strings.Repeat("q", 3*each), Tool: "t", Polarity: Use})
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "more than the 42") {
		t.Errorf("a lesson over the limit alone: got %v, want ErrTooLarge naming the limit", err)
	}
	if got := m.Len(); got != 2 {
		t.Errorf("a refused lesson evicted others: %d lessons, want 2", got)
	}
}

func TestBoundLessonsBytesOnLoad(t *testing.T) {
	s := newMemStore()
	for i, q := range []string{"weather pa", "book fligh", "send email"} {
		at := epoch.Add(time.Duration(i) * time.Hour)
		s.Put(t.Context(), Lesson{Query: q, Tool: "tool", Polarity: Use, Source: SourceFeedback, Created: at, LastUsed: at, Uses: 1})
	}
	m, err := NewMemory(t.Context(), s, MemoryOptions{MaxBytes: 2 * 14})
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Len(); got != 2 || s.ids()[0] != 2 {
		t.Errorf("loaded %d lessons, store %v; want the 2 most recent", got, s.ids())
	}
}

// BenchmarkAdjustLongQuery applies a thousand lessons to requests of 100
// KB and more: the work must stay near-linear in the request's length.
func BenchmarkAdjustLongQuery(b *testing.B) {
	m, _ := benchMemory(b, 1000)
	syn := newSynthetic(9, 3000)
	var distinct strings.Builder
	for i := 0; distinct.Len() < 1<<20; i++ {
		fmt.Fprintf(&distinct, "w%dx ", i)
	}
	var text strings.Builder
	for text.Len() < 100<<10 {
		text.WriteString(syn.text() + " ")
	}
	for name, q := range map[string]string{
		"100KB_text":   text.String(),
		"4MB_one_word": strings.Repeat("logs ", 4<<20/5),
		"1MB_distinct": distinct.String(),
	} {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(q)))
			for b.Loop() {
				m.AdjustFor(context.Background(), "", q)
			}
		})
	}
}

// TestBoundStateGrowthLessonsPerPrincipal: one principal's lessons stay
// within MaxPerPrincipal, its own least recently used going first, and a
// principal teaching many never evicts another's.
func TestBoundStateGrowthLessonsPerPrincipal(t *testing.T) {
	m, s, c := newMemory(t, MemoryOptions{MaxPerPrincipal: 2})
	teach := teacher(t, m, c)
	bob := teach("bob", "send email")
	var alice []int64
	for _, q := range []string{"weather paris", "book flight", "play music", "read news"} {
		alice = append(alice, teach("alice", q).ID)
	}
	want := []int64{bob.ID, alice[2], alice[3]}
	if got := ids(m.List()); !cmp.Equal(got, want) {
		t.Errorf("lessons %v, want bob's %d and alice's two newest %v", got, bob.ID, alice[2:])
	}
	if got := s.ids(); !cmp.Equal(got, want) {
		t.Errorf("store: lessons %v, want %v", got, want)
	}
	// Shared lessons (no principal) count against MaxLessons alone.
	for _, q := range []string{"a b", "c d", "e f"} {
		teach("", q)
	}
	if got := len(m.List()); got != 6 {
		t.Errorf("with three shared lessons: %d lessons, want 6", got)
	}
}

// TestBoundStateGrowthLessonsTotalTakenFromTheHeaviest: past MaxLessons
// (or MaxBytes) the lessons that go are those of the principal holding
// most, then the shared ones (the operator's, lessons of before), so that
// a few principals teaching fast push out neither another principal's
// lessons nor the operator's.
func TestBoundStateGrowthLessonsTotalTakenFromTheHeaviest(t *testing.T) {
	for _, bound := range []MemoryOptions{{MaxPerPrincipal: 3, MaxLessons: 5}, {MaxPerPrincipal: 3, MaxBytes: 5 * 14}} {
		m, _, c := newMemory(t, bound)
		teach := teacher(t, m, c) // "operator 1" and "send email": 10 bytes of query, 4 of tool
		kept := []int64{teach("", "operator 1").ID, teach("bob", "send email").ID}
		for i := range 6 {
			kept = append(kept, teach(fmt.Sprint("heavy", i%2), fmt.Sprint("heavy q ", i)).ID)
		}
		if got := ids(m.List()); !slices.Contains(got, kept[0]) || !slices.Contains(got, kept[1]) || len(got) != 5 {
			t.Errorf("bound %+v: lessons %v, want 5 with the operator's %d and bob's %d", bound, got, kept[0], kept[1])
		}
	}
}

// TestLessonsApplyToTheirPrincipal: a principal's lesson adjusts its own
// queries, not another's; a shared one adjusts everyone's; with Shared
// set, every lesson adjusts everyone's.
func TestLessonsApplyToTheirPrincipal(t *testing.T) {
	for _, shared := range []bool{false, true} {
		m, _, _ := newMemory(t, MemoryOptions{Shared: shared})
		if _, err := m.Learn(t.Context(), Lesson{Query: "query the system logs", Tool: "syslog", Polarity: Use, Principal: "alice"}); err != nil {
			t.Fatal(err)
		}
		if got := len(m.AdjustFor(t.Context(), "alice", "query the system logs")); got != 1 {
			t.Errorf("shared=%v: alice's own lesson: %d adjustments, want 1", shared, got)
		}
		want := 0
		if shared {
			want = 1
		}
		if got := len(m.AdjustFor(t.Context(), "bob", "query the system logs")); got != want {
			t.Errorf("shared=%v: bob, alice's lesson: %d adjustments, want %d", shared, got, want)
		}
	}
}

// teacher teaches m, an hour after its last lesson, that who's query uses
// "tool", failing t on error.
func teacher(t *testing.T, m *Memory, c *clock) func(who, query string) Lesson {
	return func(who, query string) Lesson {
		t.Helper()
		c.Advance(time.Hour)
		l, err := m.Learn(t.Context(), Lesson{Query: query, Tool: "tool", Polarity: Use, Principal: who})
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
}
