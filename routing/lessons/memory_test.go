package lessons

import (
	"errors"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

const eps = 1e-9

var approx = cmpopts.EquateApprox(0, eps)

func TestAdjustGatesOnSimilarity(t *testing.T) {
	// One lesson: every IDF is equal and the similarity is plain Jaccard
	// over the terms [show weather forecast pari tomorrow].
	tests := []struct {
		name  string
		query string
		want  map[string]float64
	}{
		{"exact query, any case and spacing", "Show the  weather forecast for PARIS tomorrow", map[string]float64{"weather_forecast": 0.3}},
		{"same terms, other words", "weather forecast: show Paris, tomorrow!", map[string]float64{"weather_forecast": 0.3}},
		{"similar query boosts by similarity", "weather forecast for Paris tomorrow please", map[string]float64{"weather_forecast": 0.3 * 4.0 / 6}},
		{"one shared word is unrelated", "book a flight to Paris", map[string]float64{}},
		{"a subset short of the gate", "weather in Paris", map[string]float64{}},
		{"no shared word", "send an email to Ann", map[string]float64{}},
		{"empty query", "  ", map[string]float64{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, _, _ := newMemory(t, MemoryOptions{})
			learn(t, m, "show the weather forecast for Paris tomorrow", "weather_forecast", Use)
			if diff := cmp.Diff(tc.want, deltas(t, m, tc.query), approx); diff != "" {
				t.Errorf("Adjust(%q) deltas (-want +got):\n%s", tc.query, diff)
			}
		})
	}
}

func TestIDFDiscountsCommonWords(t *testing.T) {
	// Every lesson says "find report", so sharing those words says little;
	// plain Jaccard would put "find report hotel" at 2/4, on the gate.
	m, _, _ := newMemory(t, MemoryOptions{})
	for _, thing := range []string{"invoice", "station", "recipe", "phone", "parcel"} {
		learn(t, m, "find report "+thing, "tool_"+thing, Use)
	}
	if d := deltas(t, m, "find invoice report")["tool_invoice"]; d <= 0 {
		t.Errorf("find invoice report: tool_invoice delta %v, want > 0", d)
	}
	if d := deltas(t, m, "find invoice")["tool_invoice"]; d <= 0.2 {
		t.Errorf("find invoice: tool_invoice delta %v, want > 0.2 (the rare word carries it)", d)
	}
	if got := deltas(t, m, "find report hotel"); len(got) != 0 {
		t.Errorf("find report hotel: deltas %v, want none", got)
	}
}

func TestNegativeLesson(t *testing.T) {
	m, _, _ := newMemory(t, MemoryOptions{})
	learn(t, m, "query the system logs", "ha_get_logs", Avoid)
	learn(t, m, "query the system logs", "journal_read", Use)
	want := map[string]float64{"ha_get_logs": -0.5, "journal_read": 0.3}
	if diff := cmp.Diff(want, deltas(t, m, "Query the system logs"), approx); diff != "" {
		t.Errorf("deltas (-want +got):\n%s", diff)
	}
	got := m.AdjustFor(t.Context(), "", "query the system logs")
	if got[0].Tool != "ha_get_logs" {
		t.Errorf("Adjust order: got %s first, want the largest change (ha_get_logs) first", got[0].Tool)
	}
}

func TestCombineIsBounded(t *testing.T) {
	m, _, _ := newMemory(t, MemoryOptions{})
	tests := []struct {
		name    string
		matches []match // tool "t"; polarity from the lesson
		want    float64
	}{
		{"one lesson is polarity × max × weight", []match{{e: lessonEntry(1, Use), weight: 0.6}}, 0.3 * 0.6},
		{"two combine as a noisy OR", []match{{e: lessonEntry(1, Use), weight: 0.5}, {e: lessonEntry(2, Use), weight: 0.5}}, 0.3 * 0.75},
		{"many never pass MaxBoost", repeatMatch(10, Use, 1), 0.3},
		{"many never pass MaxPenalty", repeatMatch(10, Avoid, 1), -0.5},
		{"opposite lessons offset", []match{{e: lessonEntry(1, Use), weight: 1}, {e: lessonEntry(2, Avoid), weight: 1}}, 0.3 - 0.5},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := m.combine(tc.matches, nil)
			if len(got) != 1 || math.Abs(got[0].Delta-tc.want) > eps {
				t.Errorf("combine: got %+v, want one delta %v", got, tc.want)
			}
		})
	}
}

func lessonEntry(id int64, p Polarity) *entry {
	return newEntry(Lesson{ID: id, Query: "q", Tool: "t", Polarity: p}, nil, nil)
}

func repeatMatch(n int, p Polarity, w float64) []match {
	out := make([]match, n)
	for i := range out {
		out[i] = match{e: lessonEntry(int64(i+1), p), sim: w, weight: w}
	}
	return out
}

func TestCombinedLessonsThroughAdjust(t *testing.T) {
	// Lessons whose queries differ only in punctuation are distinct
	// lessons with the same terms: each matches at similarity 1.
	m, _, _ := newMemory(t, MemoryOptions{})
	for _, q := range []string{"weather paris", "weather paris?", "weather, paris", "weather paris!!"} {
		learn(t, m, q, "weather_forecast", Use)
	}
	got := m.AdjustFor(t.Context(), "", "Weather in Paris")
	if len(got) != 1 || math.Abs(got[0].Delta-0.3) > eps {
		t.Errorf("Adjust: got %+v, want weather_forecast +0.3 (bounded)", got)
	}
}

func TestDecay(t *testing.T) {
	tests := []struct {
		name string
		idle time.Duration
		want float64
	}{
		{"fresh", 0, 0.3},
		{"one half-life", 30 * 24 * time.Hour, 0.15},
		{"two half-lives", 60 * 24 * time.Hour, 0.075},
		{"a clock that went back", -time.Hour, 0.3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, _, c := newMemory(t, MemoryOptions{})
			learn(t, m, "weather paris", "weather_forecast", Use)
			c.Advance(tc.idle)
			if got := deltas(t, m, "weather paris")["weather_forecast"]; math.Abs(got-tc.want) > eps {
				t.Errorf("after %v idle: delta %v, want %v", tc.idle, got, tc.want)
			}
			if got := deltas(t, m, "weather paris")["weather_forecast"]; math.Abs(got-0.3) > eps {
				t.Errorf("used again at once: delta %v, want 0.3 (the use refreshed it)", got)
			}
		})
	}
}

func TestEvictsLeastRecentlyUsed(t *testing.T) {
	m, s, c := newMemory(t, MemoryOptions{MaxLessons: 3})
	a := learn(t, m, "weather paris", "weather", Use)
	c.Advance(time.Hour)
	b := learn(t, m, "book flight", "flights", Use)
	c.Advance(time.Hour)
	d := learn(t, m, "send email", "mail", Use)
	c.Advance(time.Hour)
	m.AdjustFor(t.Context(), "", "weather paris") // a is now the most recent
	c.Advance(time.Hour)
	e := learn(t, m, "play music", "music", Use)

	want := []int64{a.ID, d.ID, e.ID}
	if got := ids(m.List()); !cmp.Equal(got, want) {
		t.Errorf("after evicting: lessons %v, want %v (lesson %d least recently used)", got, want, b.ID)
	}
	if got := s.ids(); !cmp.Equal(got, want) {
		t.Errorf("store after evicting: lessons %v, want %v", got, want)
	}
	if got := deltas(t, m, "book flight"); len(got) != 0 {
		t.Errorf("evicted lesson still applies: %v", got)
	}
}

func TestLoadEvictsPastMaxLessons(t *testing.T) {
	s := newMemStore()
	for i, q := range []string{"weather paris", "book flight", "send email"} {
		at := epoch.Add(time.Duration(i) * time.Hour)
		s.Put(t.Context(), Lesson{Query: q, Tool: "t", Polarity: Use, Source: SourceFeedback, Created: at, LastUsed: at, Uses: 1})
	}
	// Equal LastUsed: Created decides.
	s.Put(t.Context(), Lesson{Query: "play music", Tool: "t", Polarity: Use, Source: SourceFeedback, Created: epoch.Add(-time.Hour), LastUsed: epoch.Add(2 * time.Hour), Uses: 1})
	m, err := NewMemory(t.Context(), s, MemoryOptions{MaxLessons: 2})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := ids(m.List()), []int64{3, 4}; !cmp.Equal(got, want) {
		t.Errorf("loaded lessons %v, want %v", got, want)
	}
	if got, want := s.ids(), []int64{3, 4}; !cmp.Equal(got, want) {
		t.Errorf("store lessons %v, want %v", got, want)
	}
}

func ids(ls []Lesson) []int64 {
	out := make([]int64, len(ls))
	for i, l := range ls {
		out[i] = l.ID
	}
	return out
}

func TestLearnDedups(t *testing.T) {
	m, s, c := newMemory(t, MemoryOptions{})
	first, err := m.Learn(t.Context(), Lesson{Query: "Weather  in Paris", Tool: "weather", Polarity: Use, Source: SourceDetour})
	if err != nil {
		t.Fatal(err)
	}
	c.Advance(time.Hour)
	again, err := m.Learn(t.Context(), Lesson{Query: "weather in paris ", Tool: "weather", Polarity: Use, Note: "the user said so"})
	if err != nil {
		t.Fatal(err)
	}
	want := first
	want.Uses, want.LastUsed, want.Note, want.Source = 2, epoch.Add(time.Hour), "the user said so", SourceFeedback
	if diff := cmp.Diff(want, again); diff != "" {
		t.Errorf("Learn again (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]Lesson{want}, m.List()); diff != "" {
		t.Errorf("List (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, s.get(first.ID)); diff != "" {
		t.Errorf("stored (-want +got):\n%s", diff)
	}

	other := learn(t, m, "weather in paris", "forecast", Use)
	if other.ID == first.ID || m.Len() != 2 {
		t.Errorf("another tool: got lesson %d and %d lessons, want a new lesson", other.ID, m.Len())
	}

	flipped := learn(t, m, "weather in Paris", "weather", Avoid)
	if m.Len() != 2 || flipped.ID == first.ID {
		t.Errorf("opposite polarity: %d lessons, want 2 (the new word replaces the old)", m.Len())
	}
	if got := deltas(t, m, "weather in paris")["weather"]; got >= 0 {
		t.Errorf("after flipping: weather delta %v, want negative", got)
	}
}

func TestDetourDoesNotOverruleFeedback(t *testing.T) {
	tests := []struct {
		name         string
		old, new     string // sources
		wantErr      error
		wantPolarity Polarity // of the one lesson left
	}{
		{"feedback overrules feedback", SourceFeedback, SourceFeedback, nil, Use},
		{"feedback overrules a detour", SourceDetour, SourceFeedback, nil, Use},
		{"a detour overrules a detour", SourceDetour, SourceDetour, nil, Use},
		{"a detour does not overrule feedback", SourceFeedback, SourceDetour, ErrOverruled, Avoid},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, _, _ := newMemory(t, MemoryOptions{})
			if _, err := m.Learn(t.Context(), Lesson{Query: "query the system logs", Tool: "ha_get_logs", Polarity: Avoid, Source: tc.old}); err != nil {
				t.Fatal(err)
			}
			_, err := m.Learn(t.Context(), Lesson{Query: "query the system logs", Tool: "ha_get_logs", Polarity: Use, Source: tc.new})
			if !errors.Is(err, tc.wantErr) {
				t.Errorf("Learn: got error %v, want %v", err, tc.wantErr)
			}
			if ls := m.List(); len(ls) != 1 || ls[0].Polarity != tc.wantPolarity {
				t.Errorf("lessons %+v, want one saying %s", ls, tc.wantPolarity)
			}
		})
	}
}

func TestLearnRejectsInvalid(t *testing.T) {
	tests := []struct {
		name string
		l    Lesson
		want string
	}{
		{"no query", Lesson{Query: " ", Tool: "t", Polarity: Use}, "no query"},
		{"no tool", Lesson{Query: "q", Polarity: Use}, "no tool"},
		{"no polarity", Lesson{Query: "q", Tool: "t"}, "polarity 0"},
		{"unknown source", Lesson{Query: "q", Tool: "t", Polarity: Use, Source: "guess"}, `source "guess"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, s, _ := newMemory(t, MemoryOptions{})
			_, err := m.Learn(t.Context(), tc.l)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Learn: got error %v, want one saying %q", err, tc.want)
			}
			if m.Len() != 0 || len(s.ids()) != 0 {
				t.Errorf("Learn stored an invalid lesson")
			}
		})
	}
}

func TestLearnStoreFailureChangesNothing(t *testing.T) {
	m, s, _ := newMemory(t, MemoryOptions{})
	s.setFail(errors.New("disk full"))
	if _, err := m.Learn(t.Context(), Lesson{Query: "weather paris", Tool: "weather", Polarity: Use}); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("Learn: got error %v, want the store's", err)
	}
	if m.Len() != 0 || len(deltas(t, m, "weather paris")) != 0 {
		t.Errorf("a lesson the store refused is in memory")
	}
}

func TestForgetAndClear(t *testing.T) {
	m, s, _ := newMemory(t, MemoryOptions{})
	a := learn(t, m, "weather paris", "weather", Use)
	b := learn(t, m, "book flight", "flights", Use)
	if err := m.Forget(t.Context(), a.ID); err != nil {
		t.Fatalf("Forget: %v", err)
	}
	if got := deltas(t, m, "weather paris"); len(got) != 0 {
		t.Errorf("forgotten lesson applies: %v", got)
	}
	if got := ids(m.List()); !cmp.Equal(got, []int64{b.ID}) {
		t.Errorf("after Forget: lessons %v, want [%d]", got, b.ID)
	}
	if err := m.Forget(t.Context(), a.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("Forget again: got %v, want ErrNotFound", err)
	}
	if err := m.Clear(t.Context()); err != nil {
		t.Fatalf("Clear: %v", err)
	}
	if m.Len() != 0 || len(s.ids()) != 0 || len(deltas(t, m, "book flight")) != 0 {
		t.Errorf("after Clear: %d lessons, %d stored", m.Len(), len(s.ids()))
	}
}

func TestForgetStoreFailureKeepsLesson(t *testing.T) {
	m, s, _ := newMemory(t, MemoryOptions{})
	a := learn(t, m, "weather paris", "weather", Use)
	s.setFail(errors.New("disk full"))
	if err := m.Forget(t.Context(), a.ID); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("Forget: got %v, want the store's error", err)
	}
	if m.Len() != 1 || len(deltas(t, m, "weather paris")) != 1 {
		t.Errorf("a lesson the store kept is gone from memory")
	}
}

func TestFlushBatchesUses(t *testing.T) {
	m, s, c := newMemory(t, MemoryOptions{})
	a := learn(t, m, "weather paris", "weather", Use)
	b := learn(t, m, "book flight", "flights", Use)
	puts := s.puts
	c.Advance(time.Hour)
	for range 100 {
		m.AdjustFor(t.Context(), "", "weather paris")
		m.AdjustFor(t.Context(), "", "book flight")
	}
	if s.puts != puts || len(s.batchSizes()) != 0 {
		t.Errorf("Adjust wrote to the store (%d puts, %d batches)", s.puts-puts, len(s.batchSizes()))
	}
	if got := m.List()[0].LastUsed; !got.Equal(epoch.Add(time.Hour)) {
		t.Errorf("LastUsed in memory %v, want %v", got, epoch.Add(time.Hour))
	}
	if err := m.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	if !cmp.Equal(s.batchSizes(), []int{2}) {
		t.Errorf("Flush batches %v, want one of 2", s.batchSizes())
	}
	for _, id := range []int64{a.ID, b.ID} {
		if got := s.get(id).LastUsed; !got.Equal(epoch.Add(time.Hour)) {
			t.Errorf("stored LastUsed of %d: %v, want %v", id, got, epoch.Add(time.Hour))
		}
	}
	if err := m.Flush(t.Context()); err != nil || len(s.batchSizes()) != 1 {
		t.Errorf("Flush with nothing new: err %v, %d batches, want none written", err, len(s.batchSizes()))
	}
}

func TestFlushFailureKeepsUses(t *testing.T) {
	m, s, c := newMemory(t, MemoryOptions{})
	learn(t, m, "weather paris", "weather", Use)
	c.Advance(time.Hour)
	m.AdjustFor(t.Context(), "", "weather paris")
	s.setFail(errors.New("disk full"))
	if err := m.Flush(t.Context()); err == nil {
		t.Fatal("Flush: got no error from a failing store")
	}
	s.setFail(nil)
	if err := m.Flush(t.Context()); err != nil || !cmp.Equal(s.batchSizes(), []int{1}) {
		t.Errorf("Flush after recovery: err %v, batches %v, want the use written", err, s.batchSizes())
	}
}

func TestConcurrentUse(t *testing.T) {
	m, _, _ := newMemory(t, MemoryOptions{MaxLessons: 20})
	queries := []string{"weather paris", "book flight", "send email", "play music", "read file"}
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 50 {
				q := queries[(w+i)%len(queries)]
				switch i % 5 {
				case 0:
					if _, err := m.Learn(t.Context(), Lesson{Query: q + " " + string(rune('a'+i%26)), Tool: "t", Polarity: Use}); err != nil {
						t.Error(err)
					}
				case 1:
					if ls := m.List(); len(ls) > 0 {
						m.Forget(t.Context(), ls[0].ID) // may lose the race: ErrNotFound is fine
					}
				case 2:
					if err := m.Flush(t.Context()); err != nil {
						t.Error(err)
					}
				default:
					m.AdjustFor(t.Context(), "", q)
				}
			}
		})
	}
	wg.Wait()
	if m.Len() > 20 {
		t.Errorf("Len %d, want at most MaxLessons 20", m.Len())
	}
}

// What a memory flushed to its store is what a new memory over that
// store starts from: lessons, uses and so the adjustments they make.
func TestPersistenceAcrossReopen(t *testing.T) {
	c := newClock()
	opts := MemoryOptions{Now: c.Now}
	queries := []string{"show the weather forecast for Paris tomorrow", "query the system logs", "book a flight to Rome"}

	s := newMemStore()
	m, err := NewMemory(t.Context(), s, opts)
	if err != nil {
		t.Fatal(err)
	}
	learn(t, m, queries[0], "weather_forecast", Use)
	learn(t, m, queries[1], "ha_get_logs", Avoid)
	learn(t, m, queries[2], "flights_book", Use)
	c.Advance(10 * 24 * time.Hour)
	m.AdjustFor(t.Context(), "", queries[0]) // a use, to be flushed
	c.Advance(10 * 24 * time.Hour)
	for _, q := range queries {
		m.AdjustFor(t.Context(), "", q+" please") // uses at the same time: flushed below
	}
	if err := m.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	before := m.List()
	var adjBefore [][]Adjustment
	for _, q := range queries {
		adjBefore = append(adjBefore, m.AdjustFor(t.Context(), "", q+" please"))
	}

	m, err = NewMemory(t.Context(), s, opts)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(before, m.List()); diff != "" {
		t.Errorf("lessons after reopening (-before +after):\n%s", diff)
	}
	for i, q := range queries {
		if diff := cmp.Diff(adjBefore[i], m.AdjustFor(t.Context(), "", q+" please"), approx); diff != "" {
			t.Errorf("Adjust(%q) after reopening (-before +after):\n%s", q, diff)
		}
	}
	if len(adjBefore[0]) != 1 || len(adjBefore[1]) != 1 || adjBefore[1][0].Delta >= 0 {
		t.Errorf("adjustments %+v: want one boost and one penalty among them", adjBefore)
	}
}
