package config

import (
	"strings"
	"testing"
)

func TestUpstreamDescriptionReachesTheProxyTrimmed(t *testing.T) {
	p := loadProfile(t, `
profiles:
  main:
    upstreams:
      notes:
        command: notes-server
        description: "  my personal notes folder: todo lists, journal  "
      work: {command: work-server}
`, nil)
	got := map[string]string{}
	for _, u := range p.Upstreams {
		got[u.Name] = u.Description
	}
	if got["notes"] != "my personal notes folder: todo lists, journal" || got["work"] != "" {
		t.Errorf("got descriptions %q, want notes' trimmed and none for work", got)
	}
}

func TestUpstreamDescriptionBadInputNamesTheKey(t *testing.T) {
	for _, tt := range []struct {
		name, value string
		want        []string
	}{
		{"over the bound", strings.Repeat("a", MaxDescription+1), []string{":5:", "upstreams.notes.description", "1001 characters: at most 1000"}},
		{"control character", `"notes\u0007folder"`, []string{":5:", "upstreams.notes.description", "control character"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := load(t, "profiles:\n  p:\n    upstreams:\n      notes:\n        description: "+tt.value+"\n        command: x\n", nil)
			if err == nil {
				t.Fatal("loaded, want an error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
	if _, err := load(t, "profiles:\n  p:\n    upstreams:\n      notes:\n        description: "+strings.Repeat("é", MaxDescription)+"\n        command: x\n", nil); err != nil {
		t.Errorf("a description of exactly %d characters: %v", MaxDescription, err)
	}
}
