package integrity

import (
	"slices"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

// scopedPins is memPins read and written by upstream, recording which
// upstreams each transaction read (nil: all).
type scopedPins struct {
	memPins
	read [][]string
}

func (m *scopedPins) UpdatePins(change func(Pins) bool) error {
	m.read = append(m.read, nil)
	return m.memPins.UpdatePins(change)
}

func (m *scopedPins) UpdateUpstreamPins(upstreams []string, change func(Pins) bool) error {
	m.read = append(m.read, upstreams)
	return m.memPins.UpdatePins(func(all Pins) bool {
		some := Pins{}
		for _, u := range upstreams {
			if all[u] != nil {
				some[u] = all[u]
			}
		}
		if !change(some) {
			return false
		}
		for _, u := range upstreams {
			delete(all, u)
			if len(some[u]) > 0 {
				all[u] = some[u]
			}
		}
		return true
	})
}

// TestCheckReadsItsUpstreamsPinsAlone checks that a Check, a Hold and an
// approval read the pins of their upstream only when the PinStore can,
// and that the store still knows every upstream's pins after them.
func TestCheckReadsItsUpstreamsPinsAlone(t *testing.T) {
	ps := &scopedPins{}
	s := openAt(t, ps)
	for _, up := range []string{"alpha", "beta"} {
		if _, err := s.Check(up, []mcp.Tool{searchV1, fetchV1}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Hold("alpha", map[string]string{"search": "held"}); err != nil {
		t.Fatal(err)
	}
	if err := s.ApproveShown("beta__fetch", "", byName); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Check("gamma", []mcp.Tool{fetchV1}); err != nil {
		t.Fatal(err)
	}
	want := [][]string{nil, {"alpha"}, {"beta"}, {"alpha"}, {"beta"}, {"gamma"}}
	if !slices.EqualFunc(ps.read, want, slices.Equal) {
		t.Errorf("read %q, want %q", ps.read, want)
	}
	for _, p := range []struct{ up, tool string }{{"alpha", "search"}, {"beta", "search"}, {"gamma", "fetch"}} {
		if _, ok := s.Lookup(p.up, p.tool); !ok {
			t.Errorf("no pin for %s of %s after the updates of one upstream each", p.tool, p.up)
		}
	}
	if p, _ := s.Lookup("alpha", "search"); p.Held != "held" {
		t.Errorf("alpha's search held %q, want held", p.Held)
	}
}
