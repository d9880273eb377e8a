package state

import (
	"strings"
	"testing"

	"github.com/mcp-router/mcp-router/proxy/integrity"
)

// TestUpdateUpstreamPinsReadsAndWritesTheirsAlone checks that a Check of
// one upstream reads that upstream's pins only (not the whole table, once
// per upstream, as a start over hundreds of upstreams did), and that its
// writes and deletions leave the other upstreams' pins as they were.
func TestUpdateUpstreamPinsReadsAndWritesTheirsAlone(t *testing.T) {
	for name, db := range map[string]*DB{"sqlite": openDB(t, t.TempDir()), "memory": openMemory(t)} {
		t.Run(name, func(t *testing.T) {
			ps, ok := db.Pins().(integrity.UpstreamPinStore)
			if !ok {
				t.Fatal("the SQLite pins cannot be read by upstream")
			}
			rec := func(c string) integrity.Record { return integrity.Record{Hash: strings.Repeat(c, 64), FirstSeen: t0} }
			err := ps.UpdatePins(func(p integrity.Pins) bool {
				p["alpha"] = map[string]integrity.Record{"x": rec("a"), "y": rec("b")}
				p["beta"] = map[string]integrity.Record{"x": rec("c")}
				p["gamma"] = map[string]integrity.Record{"z": rec("d")}
				return true
			})
			if err != nil {
				t.Fatal(err)
			}
			err = ps.UpdateUpstreamPins([]string{"alpha", "delta"}, func(p integrity.Pins) bool {
				if len(p) != 1 || len(p["alpha"]) != 2 {
					t.Errorf("got %v, want alpha's two pins alone", p)
				}
				delete(p["alpha"], "y")
				p["delta"] = map[string]integrity.Record{"w": rec("e")}
				return true
			})
			if err != nil {
				t.Fatal(err)
			}
			ps.UpdatePins(func(p integrity.Pins) bool {
				got := map[string]int{}
				for up, tools := range p {
					got[up] = len(tools)
				}
				if want := map[string]int{"alpha": 1, "beta": 1, "gamma": 1, "delta": 1}; len(got) != len(want) ||
					got["alpha"] != 1 || got["beta"] != 1 || got["gamma"] != 1 || got["delta"] != 1 {
					t.Errorf("pins per upstream %v, want %v", got, want)
				}
				return false
			})
		})
	}
}
