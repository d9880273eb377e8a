package evict

import "testing"

func TestToFit(t *testing.T) {
	expired := func(v int) bool { return v < 0 }
	m := map[string]int{"a": 1, "b": -1}
	ToFit(m, 3, expired)
	if len(m) != 2 {
		t.Errorf("below the bound: %v, want it untouched", m)
	}
	ToFit(m, 2, expired)
	if len(m) != 1 || m["a"] != 1 {
		t.Errorf("full with an expired entry: %v, want only a", m)
	}
	ToFit(m, 1, expired)
	if len(m) != 0 {
		t.Errorf("full with nothing expired: %v, want empty", m)
	}
}
