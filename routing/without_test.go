package routing

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestWithoutIsAsIfNeverAdded(t *testing.T) {
	ix := lexIndex(IndexOptions{}, "weather", lexWeather, "files", lexFiles, "mail", lexMail)
	queries := []string{"weather forecast", "read a file then email it to Bob. Also list the folder", "write text", "alerts"}
	before := make([][]Hit, len(queries))
	for i, q := range queries {
		before[i] = ix.Search(q, 0)
	}
	gone := []string{"read_file", "weather_alerts", "not_a_tool", "read_file"}
	without := ix.Without(gone...)
	drop := func(tools []Tool) []Tool {
		return slices.DeleteFunc(slices.Clone(tools), func(t Tool) bool { return slices.Contains(gone, t.Name) })
	}
	fresh := lexIndex(IndexOptions{}, "weather", drop(lexWeather), "files", drop(lexFiles), "mail", lexMail)
	if without.Len() != fresh.Len() {
		t.Errorf("Without: %d tools, want %d", without.Len(), fresh.Len())
	}
	approx := cmpopts.EquateApprox(0, 1e-9)
	for i, q := range queries {
		if diff := cmp.Diff(fresh.Search(q, 0), without.Search(q, 0), approx); diff != "" {
			t.Errorf("Search(%q) without tools differs from an index built without them (-built +Without):\n%s", q, diff)
		}
		if diff := cmp.Diff(before[i], ix.Search(q, 0)); diff != "" {
			t.Errorf("Without changed the original index: Search(%q) (-before +after):\n%s", q, diff)
		}
	}
	// The copy stays usable: replacing an upstream in it leaves the
	// original alone.
	without.SetUpstream("mail", nil)
	without.SetUpstream("files", []Tool{lexTool("delete_file", "Delete a file.")})
	for i, q := range queries {
		if diff := cmp.Diff(before[i], ix.Search(q, 0)); diff != "" {
			t.Errorf("changing the copy changed the original: Search(%q) (-before +after):\n%s", q, diff)
		}
	}
}
