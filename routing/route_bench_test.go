package routing

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkRoute routes benchmark requests through the whole router
// (ranking, abstention, selection, fusion, boundary loading, alerts) on
// synthetic catalogs of 1,000 and 50,000 tools and reports per-request
// latency percentiles.
func BenchmarkRoute(b *testing.B) {
	tools, queries := lexBenchCorpus(b)
	for _, n := range []int{1_000, 50_000} {
		b.Run(fmt.Sprintf("tools=%d", n), func(b *testing.B) {
			r := NewRouter(RouterOptions{})
			for up, ts := range lexSyntheticCatalog(tools, n) {
				r.SetUpstream(up, ts)
			}
			ctx := context.Background()
			r.Route(ctx, Request{Query: queries[0]}) // refresh the postings once, untimed
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				start := time.Now()
				r.Route(ctx, Request{Query: queries[i%len(queries)]})
				lat = append(lat, time.Since(start))
			}
			b.StopTimer()
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds()), "p50-ns")
			b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds()), "p99-ns")
		})
	}
}

// BenchmarkRouteWithEmbeddings is BenchmarkRoute with embeddings fused
// in (an in-process hashing embedder, 64 dimensions, query vectors
// cached after the first round): what fusing the two arms costs.
func BenchmarkRouteWithEmbeddings(b *testing.B) {
	tools, queries := lexBenchCorpus(b)
	var n atomic.Int64
	// The query cache holds every request, so that the rounds timed read
	// cached query vectors, as the comment above says.
	sem := NewSemanticIndex(SemanticOptions{Embedder: hashEmbedder(&n)})
	sem.queries = newQueryLRU(len(queries))
	r := NewRouter(RouterOptions{Semantic: sem})
	ctx := context.Background()
	for up, ts := range lexSyntheticCatalog(tools, 1_000) {
		r.SetUpstream(up, ts)
		if err := r.Embed(ctx, up, ts); err != nil {
			b.Fatal(err)
		}
	}
	for _, q := range queries {
		r.Route(ctx, Request{Query: q}) // refresh the postings and cache the query vectors, untimed
	}
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		start := time.Now()
		r.Route(ctx, Request{Query: queries[i%len(queries)]})
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds()), "p50-ns")
}
