package editdist

import (
	"strings"
	"testing"
)

func TestDistance(t *testing.T) {
	long := strings.Repeat("x", 40)
	tests := []struct {
		name  string
		a, b  string
		limit int
		want  int
	}{
		{"same", "recommend", "recommend", 2, 0},
		{"one insertion", "recomend", "recommend", 2, 1},
		{"a swap is one edit", "form", "from", 2, 1},
		{"substitution", "cat", "cut", 2, 1},
		{"from empty", "", "abc", 5, 3},
		{"past the limit", "abcdef", "uvwxyz", 2, 3},
		{"longer than the stack buffer", long + "ab", long + "ba", 2, 1},
		{"long, past the limit", long, strings.Repeat("y", 40), 3, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Distance(tt.a, tt.b, tt.limit); got != tt.want {
				t.Errorf("Distance(%q, %q, %d) = %d, want %d", tt.a, tt.b, tt.limit, got, tt.want)
			}
		})
	}
}

func BenchmarkDistance(b *testing.B) {
	for b.Loop() {
		Distance("recomend", "recommend", 2)
	}
}
