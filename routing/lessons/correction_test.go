package lessons

import (
	"slices"
	"testing"

	"github.com/mcp-router/mcp-router/routing"
)

// TestRouteCorrectionKeepsTheToolOff: after a person's correction ("No,
// I meant system logs": avoid ha_get_logs), the router no longer hands
// ha_get_logs over for that kind of request, not merely lower; for a
// request about the smart home it still does. A detour's avoid lesson is
// not a correction: it only lowers.
func TestRouteCorrectionKeepsTheToolOff(t *testing.T) {
	m, _, _ := newMemory(t, MemoryOptions{})
	r := routing.NewRouter(routing.RouterOptions{Lessons: m})
	r.SetUpstream("ha", []routing.Tool{
		{Name: "ha_get_logs", Upstream: "ha", Description: "Get the logbook entries of Home Assistant: state changes and events of your smart home devices."},
		{Name: "ha_turn_on", Upstream: "ha", Description: "Turn on a Home Assistant light or switch."},
	})
	selected := func(q string) []string {
		var out []string
		for _, c := range r.Route(t.Context(), routing.Request{Query: q}).Selected {
			out = append(out, c.Name)
		}
		return out
	}
	if got := selected("query the system logs"); !slices.Contains(got, "ha_get_logs") {
		t.Fatalf("before the correction: selected %v, want ha_get_logs (the seed's failure)", got)
	}
	if _, err := m.Learn(t.Context(), Lesson{Query: "query the system logs", Tool: "ha_get_logs", Polarity: Avoid, Source: SourceFeedback}); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"query the system logs", "Query the system logs, please"} {
		if got := selected(q); slices.Contains(got, "ha_get_logs") {
			t.Errorf("%q after the correction: selected %v, want ha_get_logs kept off", q, got)
		}
	}
	if got := selected("show the Home Assistant logbook"); !slices.Contains(got, "ha_get_logs") {
		t.Errorf("a smart-home request after the correction: selected %v, want ha_get_logs", got)
	}

	d, _, _ := newMemory(t, MemoryOptions{})
	if _, err := d.Learn(t.Context(), Lesson{Query: "query the system logs", Tool: "ha_get_logs", Polarity: Avoid, Source: SourceDetour}); err != nil {
		t.Fatal(err)
	}
	if a := d.AdjustFor(t.Context(), "", "query the system logs"); len(a) != 1 || a[0].Corrected || a[0].Delta >= 0 {
		t.Errorf("a detour's avoid lesson: adjustments %+v, want one lowering, not a correction", a)
	}
}
