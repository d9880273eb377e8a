package vec

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// unitAlong returns a unit vector of dims dimensions pointing mostly
// along axis.
func unitAlong(dims, axis int) []float32 {
	v := make([]float32, dims)
	for i := range v {
		v[i] = 0.01 * float32(i%7)
	}
	v[axis%dims] = 1
	return Unit(v)
}

func TestUnitAndDot(t *testing.T) {
	v := []float32{3, 4}
	Unit(v)
	if diff := cmp.Diff([]float32{0.6, 0.8}, v); diff != "" {
		t.Errorf("normalize (-want +got):\n%s", diff)
	}
	zero := []float32{0, 0}
	Unit(zero)
	if zero[0] != 0 || zero[1] != 0 {
		t.Errorf("Unit(zero): got %v, want zeros", zero)
	}
	inf := []float32{float32(math.Inf(1)), 1}
	if Unit(inf); inf[0] != 0 || inf[1] != 0 {
		t.Errorf("Unit(an infinite vector): got %v, want zeros", inf)
	}
	a := unitAlong(10, 3)
	if got := Dot(a, a); math.Abs(got-1) > 1e-6 {
		t.Errorf("Dot(a, a): got %v, want 1", got)
	}
	if got := Dot(a, []float32{1}); got != 0 {
		t.Errorf("dot of different lengths: got %v, want 0", got)
	}
}

func BenchmarkDot768(b *testing.B) {
	x, y := unitAlong(768, 1), unitAlong(768, 2)
	for b.Loop() {
		Dot(x, y)
	}
}
