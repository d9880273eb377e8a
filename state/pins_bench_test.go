package state

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mcp-router/mcp-router/internal/pgtest"
	"github.com/mcp-router/mcp-router/proxy/integrity"
)

// BenchmarkPinsNew is what a first start pays to pin the tools of one
// upstream: n new pins written in one update (a fresh upstream each
// iteration, so that every pin is new).
func BenchmarkPinsNew(b *testing.B) {
	open := map[string]func(b *testing.B) integrity.PinStore{
		"sqlite":   func(b *testing.B) integrity.PinStore { return openDB(b, b.TempDir()).Pins() },
		"postgres": func(b *testing.B) integrity.PinStore { return openPG(b, pgtest.Schema(b)).Pins() },
	}
	for _, n := range []int{100, 4656} {
		for _, backend := range []string{"sqlite", "postgres"} {
			b.Run(fmt.Sprintf("%s/n=%d", backend, n), func(b *testing.B) { benchPinsNew(b, open[backend](b), n) })
		}
	}
}

func benchPinsNew(b *testing.B, store integrity.PinStore, n int) {
	ps := store.(integrity.UpstreamPinStore)
	recs := make(map[string]integrity.Record, n)
	for i := range n {
		recs[fmt.Sprintf("tool_%d", i)] = integrity.Record{Hash: strings.Repeat("a", 64), FirstSeen: t0,
			DescriptionExcerpt: "Does a thing with the input it is given.", Contract: `{"type":"object"}`}
	}
	i := 0
	for b.Loop() {
		up := fmt.Sprintf("up%d", i)
		i++
		err := ps.UpdateUpstreamPins([]string{up}, func(p integrity.Pins) bool {
			p[up] = recs
			return true
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/pin")
}
