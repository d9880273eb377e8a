package proxy

import (
	"encoding/json"
	"slices"
	"testing"
)

// In routed mode with a planner and lessons every meta-tool is enabled,
// and every one is listed; without them, plan and routing_feedback are
// not, and the rest still are.
func TestMetaToolsListedInRoutedMode(t *testing.T) {
	all := inputServer(t, InputLimits{}).toolNames(t)
	for _, m := range metaTools {
		if !slices.Contains(all, m.def.Name) {
			t.Errorf("%s not listed with routing, a planner and lessons; listed: %v", m.def.Name, all)
		}
	}
	c, _, _ := routed(t, overHTTPWith)
	plain := c.toolNames(t)
	for _, m := range metaTools {
		want := m.def.Name != planName && m.def.Name != feedbackName
		if got := slices.Contains(plain, m.def.Name); got != want {
			t.Errorf("%s listed: got %v, want %v (routing without planner or lessons); listed: %v", m.def.Name, got, want, plain)
		}
	}
}

// The reserved names are the table's names, each once, and each is
// refused to an upstream.
func TestMetaToolsReserved(t *testing.T) {
	var names []string
	for _, m := range metaTools {
		if m.def.Name == "" || m.handler == nil {
			t.Errorf("meta-tool %+v has no name or no handler", m.def)
		}
		names = append(names, m.def.Name)
	}
	if got := ReservedNames(); !slices.Equal(got, names) {
		t.Errorf("ReservedNames() = %v, want the table's %v", got, names)
	}
	sorted := slices.Sorted(slices.Values(names))
	if len(slices.Compact(sorted)) != len(names) {
		t.Errorf("a meta-tool name is listed twice: %v", names)
	}
	for _, n := range names {
		if !isOwnTool(n) {
			t.Errorf("isOwnTool(%q) = false", n)
		}
	}
	if isOwnTool("alpha_echo") {
		t.Error(`isOwnTool("alpha_echo") = true`)
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
