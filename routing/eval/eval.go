package eval

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/mcp-router/mcp-router/internal/defaults"
)

// Ranker returns the names of the k best tools for a query, best first.
type Ranker interface {
	Rank(query string, k int) []string
}

// Options configures Run. The zero value is the default.
type Options struct {
	K int // the ranking depth asked of the ranker [10]; past it is not found
}

// Ranking is the ranking of one query, for writing out as JSON lines.
type Ranking struct {
	ID     string   `json:"id"`
	Ranked []string `json:"ranked"`
}

// Report holds the metrics of one run, averaged over the queries with gold.
type Report struct {
	Name    string // dataset name, for tables; Run leaves it empty
	Queries int    // queries scored
	Single  int    // scored queries of kind "single"
	Multi   int    // scored queries of kind "multi"
	Skipped int    // queries without gold, not scored

	R1, R5, R10 float64 // share of gold groups found in the top 1, 5, 10
	NDCG5       float64 // binary-gain NDCG at 5, each group credited once
	C5, C10     float64 // share of queries with every gold group in the top 5, 10
	MRR         float64 // mean of 1/rank of the first gold group found, 0 if none

	P50, P99 time.Duration // per-query ranking latency
}

// Run ranks every query with ranker, one at a time (the latency is a
// single request's), and scores the rankings against the gold tools.
func Run(ranker Ranker, queries []Query, opts Options) (Report, []Ranking) {
	defaults.Set(&opts.K, 10)
	k := opts.K
	var rep Report
	var sum metrics
	rankings := make([]Ranking, 0, len(queries))
	lat := make([]time.Duration, 0, len(queries))
	for _, q := range queries {
		start := time.Now()
		ranked := ranker.Rank(q.Query, k)
		lat = append(lat, time.Since(start))
		if len(ranked) > k {
			ranked = ranked[:k]
		}
		rankings = append(rankings, Ranking{ID: q.ID, Ranked: ranked})
		groups := q.Groups()
		if len(groups) == 0 {
			rep.Skipped++
			continue
		}
		rep.Queries++
		switch q.Kind {
		case "single":
			rep.Single++
		case "multi":
			rep.Multi++
		}
		for i, x := range score(groupRanks(groups, ranked)) {
			sum[i] += x
		}
	}
	if n := float64(rep.Queries); n > 0 {
		rep.R1, rep.R5, rep.R10, rep.NDCG5 = sum[0]/n, sum[1]/n, sum[2]/n, sum[3]/n
		rep.C5, rep.C10, rep.MRR = sum[4]/n, sum[5]/n, sum[6]/n
	}
	rep.P50, rep.P99 = percentile(lat, 0.50), percentile(lat, 0.99)
	return rep, rankings
}

// metrics are one query's scores, or their sums: R@1, R@5, R@10, NDCG@5,
// C@5, C@10 and the reciprocal rank.
type metrics [7]float64

// groupRanks returns the 1-based rank of each group's best member, or 0.
func groupRanks(groups [][]string, ranked []string) []int {
	ranks := make([]int, len(groups))
	for i, g := range groups {
		ranks[i] = 1 + slices.IndexFunc(ranked, func(name string) bool { return slices.Contains(g, name) })
	}
	return ranks
}

// score computes one query's metrics from its group ranks.
func score(ranks []int) metrics {
	var m metrics
	n := float64(len(ranks))
	first := 0
	all5, all10 := true, true
	var dcg float64
	for _, r := range ranks {
		found := r > 0
		for i, k := range [...]int{1, 5, 10} {
			if found && r <= k {
				m[i] += 1 / n
			}
		}
		if found && r <= 5 {
			dcg += 1 / math.Log2(float64(r)+1)
		}
		all5 = all5 && found && r <= 5
		all10 = all10 && found && r <= 10
		if found && (first == 0 || r < first) {
			first = r
		}
	}
	m[3] = dcg / idealDCG(len(ranks), 5)
	m[4], m[5] = boolf(all5), boolf(all10)
	if first > 0 {
		m[6] = 1 / float64(first)
	}
	return m
}

// idealDCG is the DCG at k of a ranking with all g groups on top.
func idealDCG(g, k int) float64 {
	var s float64
	for i := 1; i <= min(g, k); i++ {
		s += 1 / math.Log2(float64(i)+1)
	}
	return s
}

func boolf(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// percentile returns the nearest-rank p-quantile of ds (which it sorts).
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	i := int(math.Ceil(p*float64(len(ds)))) - 1
	return ds[max(0, min(i, len(ds)-1))]
}

// String returns r as a one-row table with a header.
func (r Report) String() string { return Table(r) }

// Table formats reports as an aligned text table, one row each.
func Table(reports ...Report) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-12s %7s %6s %6s %6s %6s %6s %6s %6s %6s %9s %9s\n",
		"set", "queries", "R@1", "R@5", "R@10", "NDCG@5", "C@5", "C@10", "MRR", "multi", "p50", "p99")
	for _, r := range reports {
		name := r.Name
		if name == "" {
			name = "-"
		}
		fmt.Fprintf(&b, "%-12s %7d %6.3f %6.3f %6.3f %6.3f %6.3f %6.3f %6.3f %6d %9s %9s\n",
			name, r.Queries, r.R1, r.R5, r.R10, r.NDCG5, r.C5, r.C10, r.MRR, r.Multi,
			r.P50.Round(100*time.Nanosecond), r.P99.Round(100*time.Nanosecond))
	}
	return b.String()
}
