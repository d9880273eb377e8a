package routing

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"
)

// lexBenchSets are the shared routing benchmark sets the benchmarks draw
// tools and requests from.
var lexBenchSets = []string{"bfcl", "seal_tools", "metatool"}

// lexBenchDir returns the shared routing benchmark directory, found relative
// to the module root, skipping tb when it is absent.
func lexBenchDir(tb testing.TB) string {
	tb.Helper()
	dir, err := filepath.Abs(".")
	if err != nil {
		tb.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		if filepath.Dir(dir) == dir {
			tb.Skip("module root not found")
		}
		dir = filepath.Dir(dir)
	}
	bench := filepath.Join(dir, "..", "shared", "bench", "routing")
	if _, err := os.Stat(bench); err != nil {
		tb.Skip("routing benchmark data absent")
	}
	return bench
}

// lexReadJSONL decodes every line of path into a T.
func lexReadJSONL[T any](tb testing.TB, path string) []T {
	tb.Helper()
	f, err := os.Open(path)
	if err != nil {
		tb.Skipf("benchmark file absent: %v", err)
	}
	defer f.Close()
	var out []T
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var v T
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			tb.Fatalf("%s: %v", path, err)
		}
		out = append(out, v)
	}
	return out
}

// lexBenchCorpus returns every tool and request of the shared benchmark.
func lexBenchCorpus(tb testing.TB) ([]Tool, []string) {
	dir := lexBenchDir(tb)
	var tools []Tool
	var queries []string
	for _, set := range lexBenchSets {
		type toolLine struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			InputSchema json.RawMessage `json:"input_schema"`
			Server      string          `json:"server"`
		}
		for _, t := range lexReadJSONL[toolLine](tb, filepath.Join(dir, set, "tools.jsonl")) {
			tools = append(tools, Tool{Name: set + "." + t.Name, Domain: t.Server, Description: t.Description, InputSchema: t.InputSchema})
		}
		type queryLine struct {
			Query string `json:"query"`
		}
		qs := lexReadJSONL[queryLine](tb, filepath.Join(dir, set, "queries.jsonl"))
		for i := 0; i < len(qs); i += max(1, len(qs)/300) {
			queries = append(queries, qs[i].Query)
		}
	}
	return tools, queries
}

// lexSyntheticCatalog returns n tools drawn from tools, replicated with
// suffixed names when n exceeds them, in upstreams of 50 tools each.
func lexSyntheticCatalog(tools []Tool, n int) map[string][]Tool {
	ups := map[string][]Tool{}
	for i := range n {
		t := tools[i%len(tools)]
		if r := i / len(tools); r > 0 {
			t.Name = fmt.Sprintf("%s_r%d", t.Name, r)
		}
		up := fmt.Sprintf("upstream%04d", i/50)
		t.Upstream = up
		ups[up] = append(ups[up], t)
	}
	return ups
}

// BenchmarkSearch ranks benchmark requests against synthetic catalogs of
// 100 to 100k tools and reports per-search latency percentiles and the
// index's heap memory per thousand tools.
func BenchmarkSearch(b *testing.B) {
	tools, queries := lexBenchCorpus(b)
	for _, n := range []int{100, 1_000, 10_000, 100_000} {
		b.Run(fmt.Sprintf("tools=%d", n), func(b *testing.B) {
			ups := lexSyntheticCatalog(tools, n)
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			ix := NewIndex(IndexOptions{})
			for up, ts := range ups {
				ix.SetUpstream(up, ts)
			}
			ix.Search(queries[0], 10) // refresh the postings once, untimed
			runtime.GC()
			runtime.ReadMemStats(&after)
			mem := float64(after.HeapAlloc) - float64(before.HeapAlloc)
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				start := time.Now()
				ix.Search(queries[i%len(queries)], 10)
				lat = append(lat, time.Since(start))
			}
			b.StopTimer()
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds()), "p50-ns")
			b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds()), "p99-ns")
			b.ReportMetric(mem/float64(n)*1000, "bytes/1k_tools")
			runtime.KeepAlive(ix)
		})
	}
}

// BenchmarkIndexBuild indexes every tool of the shared benchmark (4,656
// tools) into a new router and refreshes its postings: what a gateway
// spends making its catalog searchable at start.
func BenchmarkIndexBuild(b *testing.B) {
	tools, queries := lexBenchCorpus(b)
	ups := lexSyntheticCatalog(tools, len(tools))
	for b.Loop() {
		r := NewRouter(RouterOptions{})
		for up, ts := range ups {
			r.SetUpstream(up, ts)
		}
		r.Rank(context.Background(), queries[0], 1) // the first search refreshes the postings
	}
}

// BenchmarkIndexRelist replaces the tools of one upstream (50 tools), as
// a relisting does, in an index of every tool of the shared benchmark.
func BenchmarkIndexRelist(b *testing.B) {
	tools, _ := lexBenchCorpus(b)
	ups := lexSyntheticCatalog(tools, len(tools))
	ix := NewIndex(IndexOptions{})
	for up, ts := range ups {
		ix.SetUpstream(up, ts)
	}
	for b.Loop() {
		ix.SetUpstream("upstream0000", ups["upstream0000"])
	}
}
