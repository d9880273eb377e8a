package proxy

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-router/mcp-router/proxy/internal/upstream"
)

// BI-17: names that differ only in case, across upstreams or from the
// proxy's own tools, are all kept and flagged, never rejected.
func TestCatalogFlagsCaseVariants(t *testing.T) {
	offers := []offer{
		{cfg: UpstreamConfig{Name: "alpha"}, Listing: upstream.Listing{Tools: []mcp.Tool{{Name: "Search"}, {Name: "Call_Tool"}, {Name: "fetch"}}}},
		{cfg: UpstreamConfig{Name: "beta"}, Listing: upstream.Listing{Tools: []mcp.Tool{{Name: "search"}, {Name: "SEARCH"}}}},
	}
	c := buildCatalog(nil, offers, ReservedNames())
	var names []string
	for _, tool := range c.Tools {
		names = append(names, tool.Name)
	}
	if want := []string{"Call_Tool", "SEARCH", "Search", "fetch", "search"}; !slices.Equal(names, want) {
		t.Errorf("catalog %q, want %q", names, want)
	}
	if len(c.Problems) != 0 {
		t.Errorf("problems %+v, want none", c.Problems)
	}
	got := make([][]string, len(c.Warnings))
	for i, w := range c.Warnings {
		got[i] = append(slices.Clone(w.Tools), "|")
		got[i] = append(got[i], w.Upstreams...)
		if w.Shadowing || w.Collision || !strings.Contains(w.Text, "differ only in case") {
			t.Errorf("warning %+v: want a case warning", w)
		}
	}
	want := [][]string{
		{"Call_Tool", "call_tool", "|", "alpha", ""},
		{"SEARCH", "Search", "search", "|", "beta", "alpha"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("warnings (tools | upstreams) (-want +got):\n%s", diff)
	}
	if !strings.Contains(c.Warnings[0].Text, `"call_tool" (the proxy's own tool)`) {
		t.Errorf("warning %q does not name the proxy's tool", c.Warnings[0].Text)
	}
}
