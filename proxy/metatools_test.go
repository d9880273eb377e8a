package proxy

import (
	"slices"
	"testing"

	"github.com/mcp-router/mcp-router/proxy/metatools"
)

// In routed mode with a planner and lessons every meta-tool is enabled,
// and every one is listed; without them, plan and routing_feedback are
// not, and the rest still are.
func TestMetaToolsListedInRoutedMode(t *testing.T) {
	all := inputServer(t, InputLimits{}).toolNames(t)
	for _, name := range ReservedNames() {
		if !slices.Contains(all, name) {
			t.Errorf("%s not listed with routing, a planner and lessons; listed: %v", name, all)
		}
	}
	c, _, _ := routed(t, overHTTPWith)
	plain := c.toolNames(t)
	for _, name := range ReservedNames() {
		want := name != metatools.PlanName && name != metatools.FeedbackName
		if got := slices.Contains(plain, name); got != want {
			t.Errorf("%s listed: got %v, want %v (routing without planner or lessons); listed: %v", name, got, want, plain)
		}
	}
}
