package metatools

import (
	"encoding/json"
	"slices"
	"testing"
)

// The reserved names are the table's names, each once, and each is
// refused to an upstream.
func TestMetaToolsReserved(t *testing.T) {
	var names []string
	for _, m := range table {
		if m.def.Name == "" || m.handler == nil {
			t.Errorf("meta-tool %+v has no name or no handler", m.def)
		}
		names = append(names, m.def.Name)
	}
	if got := Reserved(); !slices.Equal(got, names) {
		t.Errorf("Reserved() = %v, want the table's %v", got, names)
	}
	sorted := slices.Sorted(slices.Values(names))
	if len(slices.Compact(sorted)) != len(names) {
		t.Errorf("a meta-tool name is listed twice: %v", names)
	}
	for _, n := range names {
		if !IsOwn(n) {
			t.Errorf("IsOwn(%q) = false", n)
		}
	}
	if IsOwn("alpha_echo") {
		t.Error(`IsOwn("alpha_echo") = true`)
	}
}

// routing_feedback's schema, derived from feedbackArgs, says what its
// handler reads: four strings, of which query is required.
func TestFeedbackSchemaFromType(t *testing.T) {
	var schema struct {
		Type       string
		Properties map[string]struct{ Type, Description string }
		Required   []string
	}
	if err := json.Unmarshal(feedbackDef.RawInputSchema, &schema); err != nil {
		t.Fatalf("schema %s: %v", feedbackDef.RawInputSchema, err)
	}
	if schema.Type != "object" || !slices.Equal(schema.Required, []string{"query"}) || len(schema.Properties) != 4 {
		t.Fatalf("got %s, want an object of four properties with query required", feedbackDef.RawInputSchema)
	}
	for _, name := range []string{"query", "wrong_tool", "right_tool", "note"} {
		if p := schema.Properties[name]; p.Type != "string" || p.Description == "" {
			t.Errorf("%s: got %+v, want a described string", name, p)
		}
	}
}
