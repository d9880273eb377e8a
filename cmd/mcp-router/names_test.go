package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// The docs server's one tool is search_documents: under an upstream named
// search, the default prefix is not added again, and the table says so.
func TestToolsTableNotesADefaultPrefixNotAddedTwice(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct {
		name, upstream, want, notWant string
		note                          bool
	}{
		{"default prefix", "search: {builtin: docs, args: [--root, " + dir + "]}", "search_documents", "search_search_documents", true},
		{"explicit prefix", "search: {builtin: docs, args: [--root, " + dir + "], prefix: search_}", "search_search_documents", "", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := writeFile(t, t.TempDir(), "p.yaml", "profiles:\n  default:\n    upstreams:\n      "+tt.upstream+"\n")
			out, _, err := runCLI(t, nil, "tools", "--config", cfg, "--log-level", "error")
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(out, tt.want+" ") || (tt.notWant != "" && strings.Contains(out, tt.notWant)) {
				t.Errorf("want %s listed (and not %q):\n%s", tt.want, tt.notWant, out)
			}
			note := `note: upstream search: every tool already starts with "search_", so that default prefix is not added again`
			if strings.Contains(out, note) != tt.note {
				t.Errorf("note shown = %v, want %v:\n%s", !tt.note, tt.note, out)
			}
		})
	}
}

func TestCallUnknownToolSaysDidYouMean(t *testing.T) {
	cfg := writeFile(t, t.TempDir(), "p.yaml", calcProfile)
	_, _, err := runCLI(t, nil, "call", "divide", "--args", `{"a": 1, "b": 2}`, "--config", cfg, "--log-level", "error")
	if err == nil || !strings.Contains(err.Error(), "divide: unknown tool; did you mean calculator_divide?") {
		t.Errorf("got %v, want an unknown-tool error suggesting calculator_divide", err)
	}
}

// pins approve takes the name as exposed, also when the default prefix
// was not added again.
func TestPinsApproveAToolWithoutItsDefaultPrefixAddedTwice(t *testing.T) {
	dir := t.TempDir()
	cfg := writeFile(t, dir, "p.yaml", fmt.Sprintf("state_dir: %q\nprofiles:\n  default:\n    upstreams:\n      search: {builtin: docs, args: [--root, %q]}\n",
		filepath.Join(dir, "state"), dir))
	if _, _, err := runCLI(t, nil, "tools", "--config", cfg, "--log-level", "error"); err != nil {
		t.Fatal(err)
	}
	if out, _, err := runCLI(t, nil, "pins", "approve", "search_documents", "--config", cfg); err != nil || !strings.Contains(out, "approved search_documents") {
		t.Errorf("pins approve search_documents: %v %q", err, out)
	}
}
