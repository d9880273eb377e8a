package console

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDiff(t *testing.T) {
	tests := []struct {
		name, a, b string
		want       []diffLine
	}{
		{"equal", "x\ny", "x\ny", []diffLine{{" ", "x"}, {" ", "y"}}},
		{"changed line", "x\ny\nz", "x\nY\nz", []diffLine{{" ", "x"}, {"-", "y"}, {"+", "Y"}, {" ", "z"}}},
		{"added", "x", "x\ny", []diffLine{{" ", "x"}, {"+", "y"}}},
		{"removed", "x\ny", "y", []diffLine{{"-", "x"}, {" ", "y"}}},
		{"from nothing", "", "x", []diffLine{{"+", "x"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, diff(tt.a, tt.b), cmp.AllowUnexported(diffLine{})); diff != "" {
				t.Errorf("diff (-want +got):\n%s", diff)
			}
		})
	}
}

// A diff of long texts stays bounded and still shows a change past the bound: an upstream cannot
// hide a changed line of its contract below many unchanged ones.
func TestDiffBounded(t *testing.T) {
	long := strings.Repeat("line\n", 3*maxDiffLines)
	for _, b := range []string{long + "more", long + "more\n" + long, strings.Repeat("other\n", 3*maxDiffLines)} {
		got := diff(long, b)
		if len(got) > 2*maxDiffLines+2*diffContext+3 {
			t.Errorf("diff of two texts of %d lines or more: %d lines, want at most %d", 3*maxDiffLines, len(got), 2*maxDiffLines+2*diffContext+3)
		}
		if strings.HasPrefix(b, long) && !slices.Contains(got, diffLine{"+", "more"}) {
			t.Errorf("diff of a %d-line text and one line more: the added line is not shown", 3*maxDiffLines)
		}
	}
}
