package fuse

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestNeedsFromAny(t *testing.T) {
	tests := []struct {
		name string
		in   any
		want []string
	}{
		{"nil", nil, nil},
		{"empty list", []any{}, nil},
		{"string list trims, skips blanks, keeps order and duplicates", []string{"b", " a ", "", "b"}, []string{"b", "a", "b"}},
		{"JSON list", []any{"b", "a"}, []string{"b", "a"}},
		{"bool map sorted by name", map[string]bool{"b": true, "a": true, "c": false}, []string{"a", "b"}},
		{
			"JSON map of truthy values",
			map[string]any{"c": 1.0, "d": 0.0, "a": true, "b": false, "f": nil, "g": "TRUE", "h": 2, " ": true},
			[]string{"a", "c", "g", "h"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := NeedsFromAny(tt.in)
			if err != nil {
				t.Fatalf("NeedsFromAny() error: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("NeedsFromAny() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNeedsFromAnyErrors(t *testing.T) {
	tests := []struct {
		name string
		in   any
		want string
	}{
		{"non-string list element", []any{"a", 3.0}, "needs[1]: got float64 (3), want string"},
		{"non-boolean string value", map[string]any{"a": "maybe"}, `needs["a"]: got "maybe", want true or false`},
		{"nested value", map[string]any{"a": []any{}}, `needs["a"]: got []interface {} ([]), want bool`},
		{"bare string", "a", "needs: got string (a), want list of names or map of name to bool"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := NeedsFromAny(tt.in)
			if err == nil || err.Error() != tt.want || got != nil {
				t.Errorf("NeedsFromAny() = %q, %v; want nil, %q", got, err, tt.want)
			}
		})
	}
}
