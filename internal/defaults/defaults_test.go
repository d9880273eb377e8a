package defaults

import (
	"testing"
	"time"
)

func TestSet(t *testing.T) {
	for _, c := range []struct{ v, want int }{{0, 7}, {-3, 7}, {5, 5}} {
		v := c.v
		if Set(&v, 7); v != c.want {
			t.Errorf("Set(%d, 7) = %d, want %d", c.v, v, c.want)
		}
	}
	d := time.Duration(0)
	if Set(&d, time.Second); d != time.Second {
		t.Errorf("Set(0s, 1s) = %s", d)
	}
}
