package lessons

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcp-router/mcp-router/routing"
)

func TestApply(t *testing.T) {
	hits := []routing.Hit{hit("a", 0.9, 9), hit("b", 0.6, 6), hit("c", 0.5, 5), hit("d", 0.5, 5)}
	tests := []struct {
		name string
		adj  []Adjustment
		want []routing.Hit
	}{
		{"none", nil, hits},
		{"boost reorders", []Adjustment{{Tool: "c", Delta: 0.3}},
			[]routing.Hit{hit("a", 0.9, 9), hit("c", 0.8, 5), hit("b", 0.6, 6), hit("d", 0.5, 5)}},
		{"penalty demotes", []Adjustment{{Tool: "a", Delta: -0.5}},
			[]routing.Hit{hit("b", 0.6, 6), hit("c", 0.5, 5), hit("d", 0.5, 5), hit("a", 0.4, 9)}},
		{"clamped to [0, 1], ordered unclamped", []Adjustment{{Tool: "b", Delta: 0.5}, {Tool: "c", Delta: -0.9}},
			[]routing.Hit{hit("b", 1, 6), hit("a", 0.9, 9), hit("d", 0.5, 5), hit("c", 0, 5)}},
		{"a tool not in the hits never appears", []Adjustment{{Tool: "z", Delta: 0.3}}, hits},
		{"ties keep their order", []Adjustment{{Tool: "d", Delta: 0.25}, {Tool: "c", Delta: 0.25}},
			[]routing.Hit{hit("a", 0.9, 9), hit("c", 0.75, 5), hit("d", 0.75, 5), hit("b", 0.6, 6)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := slices.Clone(hits)
			got := Apply(in, tc.adj)
			if diff := cmp.Diff(tc.want, got, approx); diff != "" {
				t.Errorf("Apply (-want +got):\n%s", diff)
			}
			if !cmp.Equal(in, hits) {
				t.Errorf("Apply modified its input: %v", in)
			}
		})
	}
}

func TestRerank(t *testing.T) {
	m, _, _ := newMemory(t, MemoryOptions{})
	learn(t, m, "query the system logs", "journal_read", Use)
	learn(t, m, "query the system logs", "ha_get_logs", Avoid)
	hits := []routing.Hit{hit("ha_get_logs", 0.8, 8), hit("journal_read", 0.45, 4), hit("fs_read", 0.4, 4)}
	got := m.Rerank(t.Context(), "", "query the system logs", hits)
	// The correction keeps ha_get_logs off, not merely lower.
	want := []string{"journal_read", "fs_read"}
	if !cmp.Equal(names(got), want) {
		t.Errorf("Rerank: got %v, want %v", names(got), want)
	}
	if got := names(m.Rerank(t.Context(), "", "book a flight", hits)); !cmp.Equal(got, names(hits)) {
		t.Errorf("Rerank of an unrelated query: got %v, want the hits unchanged", got)
	}
}

func hit(name string, score, raw float64) routing.Hit {
	return routing.Hit{Name: name, Score: score, Raw: raw}
}

func names(hits []routing.Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.Name
	}
	return out
}
