package config

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcp-router/mcp-router/proxy/approval"
)

// A profile's approvals section resolves with its defaults (nothing
// gated, refuse, the default timeout) and as written.
func TestLoadApprovals(t *testing.T) {
	p := loadProfile(t, "profiles:\n  p:\n    upstreams: {c: {builtin: calculator}}\n", nil)
	if p.Approvals.On() || p.Approvals.WithoutElicitation != approval.Refuse {
		t.Errorf("unset: got %+v, want nothing gated and refuse", p.Approvals)
	}
	p = loadProfile(t, `
profiles:
  p:
    upstreams: {c: {builtin: calculator}}
    approvals:
      destructive: true
      tools: ["fs_write_*", git_push]
      without_elicitation: console
      timeout: 30s
`, nil)
	want := approval.Policy{Destructive: true, Tools: []string{"fs_write_*", "git_push"}, WithoutElicitation: approval.Console, Timeout: 30 * time.Second}
	if diff := cmp.Diff(want, p.Approvals); diff != "" {
		t.Errorf("approvals (-want +got):\n%s", diff)
	}
}

// A glob path.Match cannot use, or a mode it does not know, is an error
// naming the file, the line and the key, and the allowed values.
func TestLoadApprovalsErrorsNameTheKey(t *testing.T) {
	for yaml, want := range map[string]string{
		"profiles:\n  p:\n    approvals:\n      tools: [\"fs_[write\"]\n":               `profiles.yaml:4: profiles.p.approvals.tools: "fs_[write" is not a valid glob`,
		"profiles:\n  p:\n    approvals:\n      without_elicitation: ask\n":             `profiles.yaml:4: profiles.p.approvals.without_elicitation: "ask" is not one of refuse, console, allow`,
		"profiles:\n  p:\n    approvals:\n      destructive: true\n      timeout: 0s\n": `profiles.p.approvals.timeout`,
	} {
		if _, err := load(t, yaml, nil); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("got %v, want %s", err, want)
		}
	}
}
