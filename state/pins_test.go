package state

import (
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

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

// TestContractPinsManyInOneUpdate writes, changes and drops more pins in
// one update than one statement holds, over two upstreams, and reads
// back exactly what it wrote.
func TestContractPinsManyInOneUpdate(t *testing.T) {
	const n = 2*pinsPerStatement + 7
	eachBackend(t, func(t *testing.T, b backend) {
		ps := b.Pins()
		want := integrity.Pins{"alpha": {}, "beta": {}}
		for i := range n {
			for up, c := range map[string]string{"alpha": "a", "beta": "b"} {
				want[up][fmt.Sprintf("t%d", i)] = integrity.Record{Hash: strings.Repeat(c, 64), FirstSeen: t0,
					DescriptionExcerpt: fmt.Sprintf("tool %d", i), Contract: "{}"}
			}
		}
		update := func(edit func(p integrity.Pins)) {
			t.Helper()
			if err := ps.UpdatePins(func(p integrity.Pins) bool { edit(p); return true }); err != nil {
				t.Fatal(err)
			}
		}
		update(func(p integrity.Pins) { maps.Copy(p, want.Clone()) })
		for i := 0; i < n; i += 2 { // change every other pin of alpha, drop every other of beta
			tool := fmt.Sprintf("t%d", i)
			r := want["alpha"][tool]
			r.PendingHash, r.ChangedAt, r.Held = strings.Repeat("c", 64), t0.Add(time.Hour), "held"
			want["alpha"][tool] = r
			delete(want["beta"], tool)
		}
		update(func(p integrity.Pins) { maps.Copy(p, want.Clone()) })
		ps.UpdatePins(func(got integrity.Pins) bool {
			if len(got) != 2 || len(got["alpha"]) != n || len(got["beta"]) != n/2 {
				t.Fatalf("read %d upstreams, %d and %d pins; want 2, %d and %d", len(got), len(got["alpha"]), len(got["beta"]), n, n/2)
			}
			for up, tools := range want {
				for tool, r := range tools {
					if !got[up][tool].Equal(r) {
						t.Errorf("%s/%s: read %+v, want %+v", up, tool, got[up][tool], r)
					}
				}
			}
			return false
		})
	})
}
