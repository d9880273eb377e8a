package config

import (
	"strings"
	"testing"
)

// A YAML syntax error is reported as file:line:, as the other errors of
// the file are: at a tab or a mis-indented key when there is one (yaml.v3
// names a line above it), else at the line yaml.v3 names.
func TestLoadSyntaxErrorNamesFileAndLine(t *testing.T) {
	for _, tc := range []struct {
		name, yaml string
		want       []string // each must appear in the error
	}{
		{"key one space off", "profiles:\n  default:\n    upstreams:\n      calc:\n        builtin: calculator\n     routing: {mode: all}\n",
			[]string{"profiles.yaml:6: ", "indented to a column that no line above it opens", "did not find expected key"}},
		{"key one space in", "profiles:\n  default:\n    upstreams:\n      calc:\n        builtin: calculator\n       routing: {mode: all}\n",
			[]string{"profiles.yaml:6: ", "indented to a column"}},
		{"tab", "profiles:\n  default:\n\tupstreams:\n      calc: {builtin: calculator}\n",
			[]string{"profiles.yaml:3: ", "a tab indents this line"}},
		{"unclosed flow mapping", "profiles:\n  default:\n    upstreams:\n      calc: {builtin: calculator\n    routing: {mode: all}\n",
			[]string{"profiles.yaml:3: YAML syntax: did not find expected ',' or '}'", "may be on a line above"}},
		{"no line", "a: b: c\n", []string{"profiles.yaml: YAML syntax: mapping values are not allowed"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := load(t, tc.yaml, nil)
			if err == nil {
				t.Fatal("loaded, want a syntax error")
			}
			for _, want := range tc.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q lacks %q", err, want)
				}
			}
			if strings.Contains(err.Error(), "yaml: line") {
				t.Errorf("error %q is in yaml.v3's own form", err)
			}
		})
	}
}

// misplaced finds nothing in sound YAML: sequences at their key's column,
// items holding mappings, block scalars and comments.
func TestMisplacedPassesSoundIndentation(t *testing.T) {
	sound := "profiles:\n  default:\n    upstreams:\n      fs:\n        command: npx\n        args:\n        - -y\n        - pkg\n" +
		"      web:\n        args: [\n          a,\n        ]\n   # a comment anywhere\n" +
		"    routing:\n      mode: all\n    notes: |\n      line one\n        indented\n      line three\nlist:\n  - name: a\n    value: 1\n  - name: b\n"
	if line, why := misplaced([]byte(sound)); line != 0 {
		t.Errorf("misplaced: line %d, %s; want none", line, why)
	}
}
