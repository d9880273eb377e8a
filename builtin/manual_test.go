package builtin

import (
	"context"
	"slices"
	"testing"

	"github.com/mcp-router/mcp-router/routing"
)

// TestBuiltInManualIsForQuestionsAboutMCPRouter: the built-in manual's
// tool declares its domain, mcp-router, exclusive, so that the router
// ranks it for questions about mcp-router and for nothing else; a docs
// server over a folder of the user's declares nothing.
func TestBuiltInManualIsForQuestionsAboutMCPRouter(t *testing.T) {
	t.Chdir(t.TempDir())
	tools := listTools(t, start(t, "docs"))
	var meta map[string]any
	if tools[0].Meta != nil {
		meta = tools[0].Meta.AdditionalFields
	}
	if d, ex := routing.DeclaredDomain(meta); d != "mcp-router" || !ex {
		t.Fatalf("built-in manual: declared domain %q exclusive %v, want mcp-router, exclusive", d, ex)
	}
	r := routing.NewRouter(routing.RouterOptions{})
	tool := tools[0]
	r.SetUpstream("docs", []routing.Tool{{Name: "docs_" + tool.Name, Upstream: "docs", Domain: "mcp-router", Exclusive: true, Description: tool.Description}})
	r.SetUpstream("notes", []routing.Tool{
		{Name: "notes_search", Upstream: "notes", Description: "Search my notes by keyword."},
		{Name: "notes_create", Upstream: "notes", Description: "Create a note with a title and text."},
	})
	for _, q := range []string{"search the documentation for the deployment guide", "find the passage about invoices in my notes", "what is the weather"} {
		d := r.Route(context.Background(), routing.Request{Query: q})
		if slices.ContainsFunc(d.Ranked, func(c routing.Candidate) bool { return c.Upstream == "docs" }) {
			t.Errorf("%q: the manual was ranked", q)
		}
	}
	d := r.Route(context.Background(), routing.Request{Query: "how do I configure mcp-router profiles"})
	if !slices.ContainsFunc(d.Selected, func(c routing.Candidate) bool { return c.Upstream == "docs" }) {
		t.Errorf("how do I configure mcp-router profiles: selected %+v, want the manual", d.Selected)
	}

	own := listTools(t, start(t, "docs", "--root", t.TempDir()))
	if own[0].Meta != nil {
		if d, _ := routing.DeclaredDomain(own[0].Meta.AdditionalFields); d != "" {
			t.Errorf("docs over a folder declares domain %q, want none", d)
		}
	}
}
