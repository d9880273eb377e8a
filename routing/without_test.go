package routing

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// TestWithoutIsAsIfNeverAdded checks the calibration fit's held-out
// rankings: with tools taken out, the index ranks as one built without
// them, and it ranks as before once they are back.
func TestWithoutIsAsIfNeverAdded(t *testing.T) {
	ix := lexIndex(IndexOptions{}, "weather", lexWeather, "files", lexFiles, "mail", lexMail)
	queries := []string{"weather forecast", "read a file then email it to Bob. Also list the folder", "write text", "alerts"}
	before := make([][]Hit, len(queries))
	for i, q := range queries {
		before[i] = ix.Search(q, 0)
	}
	gone := []string{"read_file", "weather_alerts", "not_a_tool", "read_file"}
	drop := func(tools []Tool) []Tool {
		return slices.DeleteFunc(slices.Clone(tools), func(t Tool) bool { return slices.Contains(gone, t.Name) })
	}
	fresh := lexIndex(IndexOptions{}, "weather", drop(lexWeather), "files", drop(lexFiles), "mail", lexMail)
	approx := cmpopts.EquateApprox(0, 1e-9)
	withoutTools(ix, gone, func() {
		if ix.Len() != fresh.Len() {
			t.Errorf("without: %d tools, want %d", ix.Len(), fresh.Len())
		}
		for _, q := range queries {
			if diff := cmp.Diff(fresh.Search(q, 0), ix.Search(q, 0), approx); diff != "" {
				t.Errorf("Search(%q) without tools differs from an index built without them (-built +without):\n%s", q, diff)
			}
		}
	})
	for i, q := range queries {
		if diff := cmp.Diff(before[i], ix.Search(q, 0)); diff != "" {
			t.Errorf("the tools put back: Search(%q) (-before +after):\n%s", q, diff)
		}
	}
}
