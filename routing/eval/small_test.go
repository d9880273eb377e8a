package eval

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/mcp-router/mcp-router/routing"
)

// smallCatalogs draws n catalogs of size units each from ds's tools: a
// unit is an upstream where the set has them (etom's servers), else one
// tool (metatool's plugins are one tool each), so each catalog is what a
// person might configure. The draw is seeded: every run measures the same
// catalogs.
func smallCatalogs(ds dataset, n, size int, seed uint64) [][]routing.Tool {
	byUnit := map[string][]routing.Tool{}
	var units []string
	for _, t := range ds.tools {
		u := t.Upstream
		if u == "" {
			u = t.Name
		}
		if _, ok := byUnit[u]; !ok {
			units = append(units, u)
		}
		byUnit[u] = append(byUnit[u], t)
	}
	slices.Sort(units)
	rng := rand.New(rand.NewPCG(seed, 1))
	out := make([][]routing.Tool, n)
	for i := range out {
		for _, j := range rng.Perm(len(units))[:size] {
			out[i] = append(out[i], byUnit[units[j]]...)
		}
	}
	return out
}

// smallReport counts, over small catalogs, the requests routed and what
// the router did with them.
type smallReport struct {
	served, servedAbstained, servedAlerted, servedTop5 int
	servedLost                                         int // abstained with the gold in the top 5
	foreign, foreignAbstained, foreignAlerted          int
}

func (r smallReport) String() string {
	share := func(a, b int) float64 { return float64(a) / float64(max(1, b)) }
	return fmt.Sprintf("in the catalog %5d: abstained %.3f (gold in the top 5 %.3f), alerted %.3f, gold in the top 5 %.3f | not in it %5d: abstained %.3f, alerted %.3f",
		r.served, share(r.servedAbstained, r.served), share(r.servedLost, r.served), share(r.servedAlerted, r.served), share(r.servedTop5, r.served),
		r.foreign, share(r.foreignAbstained, r.foreign), share(r.foreignAlerted, r.foreign))
}

// routeSmall routes queries through a router over each catalog: a
// query whose gold groups all have a tool in the catalog is served there,
// one whose gold groups have none is not; others (partly served) are
// left out. Each catalog routes every query it serves and at most
// foreignPer of the others, drawn with the catalog's index as seed.
func routeSmall(catalogs [][]routing.Tool, queries []Query, foreignPer int, opts routing.RouterOptions) smallReport {
	var rep smallReport
	for i, cat := range catalogs {
		r := routing.NewRouter(opts)
		byUp := map[string][]routing.Tool{}
		in := map[string]bool{}
		for _, t := range cat {
			byUp[t.Upstream] = append(byUp[t.Upstream], t)
			in[t.Name] = true
		}
		for up, ts := range byUp {
			r.SetUpstream(up, ts)
		}
		var served, foreign []Query
		for _, q := range queries {
			groups := q.Groups()
			n := 0
			for _, g := range groups {
				if slices.ContainsFunc(g, func(name string) bool { return in[name] }) {
					n++
				}
			}
			switch {
			case len(groups) == 0:
				foreign = append(foreign, q) // no tool serves it anywhere
			case n == len(groups):
				served = append(served, q)
			case n == 0:
				foreign = append(foreign, q)
			}
		}
		rng := rand.New(rand.NewPCG(uint64(i), 2))
		rng.Shuffle(len(foreign), func(a, b int) { foreign[a], foreign[b] = foreign[b], foreign[a] })
		foreign = foreign[:min(len(foreign), foreignPer)]
		route := func(q Query) (abstained, alerted, top5 bool) {
			d := r.Route(context.Background(), routing.Request{Query: q.Query})
			alerted = d.Abstained || slices.ContainsFunc(d.Alerts, func(a routing.Alert) bool {
				return a.Kind == "no_match" || a.Kind == "partial_match"
			})
			top := d.Ranked[:min(5, len(d.Ranked))]
			top5 = true
			for _, g := range q.Groups() {
				if !slices.ContainsFunc(top, func(c routing.Candidate) bool { return slices.Contains(g, c.Name) }) {
					top5 = false
				}
			}
			return d.Abstained, alerted, top5
		}
		for _, q := range served {
			ab, al, t5 := route(q)
			rep.served++
			rep.servedAbstained += b2i(ab)
			rep.servedAlerted += b2i(al)
			rep.servedTop5 += b2i(t5)
			rep.servedLost += b2i(ab && t5)
		}
		for _, q := range foreign {
			ab, al, _ := route(q)
			rep.foreign++
			rep.foreignAbstained += b2i(ab)
			rep.foreignAlerted += b2i(al)
		}
	}
	return rep
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestBenchSmallCatalogs measures abstention where most people meet it:
// a catalog of a few servers, not hundreds. Catalogs of 8 of etom's real
// MCP servers route etom's requests (levels 2 and 3, which do not name
// their server) whose tools they hold and requests for tools they lack,
// and etom's requests no tool serves; catalogs of 15 of metatool's
// plugins route people's requests the same way. A request for a tool the
// catalog lacks may still be served by a like tool there that its gold
// does not list, so "not in it" bounds abstention from below.
func TestBenchSmallCatalogs(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped under -short")
	}
	catalogs := 60
	if raceEnabled {
		catalogs = 6
	}
	etom := loadDataset(t, "etom")
	var etomQs []Query
	for _, q := range etom.queries {
		if q.Level == 2 || q.Level == 3 {
			etomQs = append(etomQs, q)
		}
	}
	meta := loadDataset(t, "metatool")
	infeasible := loadInfeasible(t)
	var b strings.Builder
	opts := routing.RouterOptions{}
	etomCats := smallCatalogs(etom, catalogs, 8, 1)
	servers := routeSmall(etomCats, etomQs, 40, opts)
	infeasibleRep := routeSmall(etomCats, infeasible, 40, opts)
	plugins := routeSmall(smallCatalogs(meta, catalogs, 15, 1), meta.queries, 40, opts)
	fmt.Fprintf(&b, "etom, 8 servers:        %v\n", servers)
	fmt.Fprintf(&b, "etom infeasible:        %v\n", infeasibleRep)
	fmt.Fprintf(&b, "metatool, 15 plugins:   %v\n", plugins)
	t.Logf("router abstention and alerts in small catalogs (%d of each):\n%s", catalogs, b.String())
	if raceEnabled {
		return // a tenth of the catalogs: the figures are not comparable
	}
	share := func(a, n int) float64 { return float64(a) / float64(max(1, n)) }
	for _, c := range []struct {
		what      string
		got, want float64
		atMost    bool
	}{
		{"etom requests a catalog serves, abstained on", share(servers.servedAbstained, servers.served), maxSmallServedAbstained, true},
		{"etom requests a catalog serves, gold tool in the top 5", share(servers.servedTop5, servers.served), minSmallServedTop5, false},
		{"etom requests no tool serves, abstained on", share(infeasibleRep.foreignAbstained, infeasibleRep.foreign), minSmallInfeasibleAbstained, false},
		{"metatool requests a catalog serves, abstained on", share(plugins.servedAbstained, plugins.served), maxSmallPluginsAbstained, true},
	} {
		if c.atMost && c.got > c.want || !c.atMost && c.got < c.want {
			t.Errorf("%s: %.3f, want %s %.3f", c.what, c.got, map[bool]string{true: "at most", false: "at least"}[c.atMost], c.want)
		}
	}
}

// Bounds of TestBenchSmallCatalogs, a little past what the router reached
// when they were set: 0.008, 0.946, 0.681 and 0.158. The share of
// requests for tools a small catalog lacks that it abstains on (0.034 for
// etom's, 0.408 for metatool's) has no bound: such a request may be
// served by a like tool its gold does not list, and on etom's large
// catalog abstention is measured against requests no tool serves at all
// (TestBenchAbstention).
const (
	maxSmallServedAbstained     = 0.03
	minSmallServedTop5          = 0.92
	minSmallInfeasibleAbstained = 0.60
	maxSmallPluginsAbstained    = 0.19
)
