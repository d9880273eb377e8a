package lessons

import (
	"math"
	"testing"
)

// teachTravel teaches two lessons for a travel tool, neither of which is
// like "flights and hotels for Rome" as a whole, and one for a calculator.
func teachTravel(t *testing.T, m *Memory, p Polarity) {
	t.Helper()
	learn(t, m, "book a flight to Paris", "travel_search", p)
	learn(t, m, "cheap flights and hotels in Lisbon", "travel_search", p)
	learn(t, m, "add two numbers", "calculator_add", Use)
}

// The lessons of one tool vote together. With 3 lesson queries, flight
// (in 2) weighs ln(1 + 1.5/2.5) = 0.470, hotel and rome (in 1 and 0)
// ln(1 + 2.5/1.5) = 0.981; the query weighs 2.432. Flight points to
// travel_search at 2/(2+1), hotel at 1/(1+1): its profile is
// (0.470·2/3 + 0.981/2)/2.432 = 0.330, past the floor (0.2), while each
// lesson alone is under the gate (0.107 and 0.330 of 0.5). The boost is
// MaxBoost × ProfileWeight × 0.330.
func TestProfilePoolsLessonsOfATool(t *testing.T) {
	m, _, _ := newMemory(t, MemoryOptions{})
	teachTravel(t, m, Use)
	got := m.AdjustFor(t.Context(), "", "flights and hotels for Rome")
	if len(got) != 1 {
		t.Fatalf("Adjust: got %+v, want one adjustment, for travel_search", got)
	}
	const sim = (0.4700036292457356*2/3 + 0.9808292530117262/2) / (0.4700036292457356 + 2*0.9808292530117262)
	if g := got[0]; g.Tool != "travel_search" || math.Abs(g.Delta-maxBoost*DefaultProfileWeight*sim) > 1e-9 {
		t.Errorf("Adjust: got %+v, want travel_search at %.4f (similarity %.4f)", g, maxBoost*DefaultProfileWeight*sim, sim)
	}
}

// One lesson is no profile: what a query shares with it is the gate's to
// judge.
func TestProfileNeedsTwoLessons(t *testing.T) {
	m, _, _ := newMemory(t, MemoryOptions{})
	learn(t, m, "cheap flights and hotels in Lisbon", "travel_search", Use)
	if got := deltas(t, m, "flights and hotels for Rome"); len(got) != 0 {
		t.Errorf("one lesson under the gate: got %v, want nothing", got)
	}
}

// Lessons that say "not this tool" do not vote for it, and profiles can
// be turned off.
func TestProfileOnlyFromPositiveLessons(t *testing.T) {
	m, _, _ := newMemory(t, MemoryOptions{})
	teachTravel(t, m, Avoid)
	if got := deltas(t, m, "flights and hotels for Rome"); len(got) != 0 {
		t.Errorf("negative lessons under the gate: got %v, want nothing", got)
	}
	off, _, _ := newMemory(t, MemoryOptions{ProfileWeight: -1})
	teachTravel(t, off, Use)
	if got := deltas(t, off, "flights and hotels for Rome"); len(got) != 0 {
		t.Errorf("profiles off: got %v, want nothing", got)
	}
}

// A profile's lessons decay as lessons do, and voting marks them used.
func TestProfileDecays(t *testing.T) {
	m, _, c := newMemory(t, MemoryOptions{})
	teachTravel(t, m, Use)
	fresh := deltas(t, m, "flights and hotels for Rome")["travel_search"]
	c.Advance(halfLife)
	// At half weight, flight points at 1/(1+1) and hotel at 0.5/(0.5+1):
	// (0.470/2 + 0.981/3)/2.432 = 0.231.
	aged := deltas(t, m, "flights and hotels for Rome")["travel_search"]
	const sim = (0.4700036292457356/2 + 0.9808292530117262/3) / (0.4700036292457356 + 2*0.9808292530117262)
	if math.Abs(aged-maxBoost*DefaultProfileWeight*sim) > 1e-9 || aged >= fresh {
		t.Errorf("after a half-life idle: delta %.4f, want %.4f (fresh: %.4f)", aged, maxBoost*DefaultProfileWeight*sim, fresh)
	}
	// The query just used them: at once, they count in full again.
	if again := deltas(t, m, "flights and hotels for Rome")["travel_search"]; math.Abs(again-fresh) > 1e-9 {
		t.Errorf("right after a use: delta %.4f, want %.4f as fresh", again, fresh)
	}
}

// A tool a lesson matches keeps the larger of its lessons' boost and its
// profile's, not both: the profile pools the same lessons.
func TestProfileDoesNotAddToAMatch(t *testing.T) {
	m, _, _ := newMemory(t, MemoryOptions{})
	teachTravel(t, m, Use)
	if got := deltas(t, m, "book a flight to Paris")["travel_search"]; math.Abs(got-maxBoost) > 1e-9 {
		t.Errorf("the exact query of a lesson: delta %.4f, want MaxBoost %.2f", got, maxBoost)
	}
}
