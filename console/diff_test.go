package console

import (
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

func TestDiffBounded(t *testing.T) {
	long := strings.Repeat("line\n", 3*maxDiffLines)
	if got := len(diff(long, long+"more")); got > 2*maxDiffLines {
		t.Errorf("diff of two %d-line texts: %d lines, want at most %d", 3*maxDiffLines, got, 2*maxDiffLines)
	}
}
