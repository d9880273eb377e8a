package eval

import (
	"strings"
	"testing"
	"time"

	"github.com/mcp-router/mcp-router/routing"
)

// holdOutSets are the shared benchmark sets measured with their gold
// tools held out, each with every sample-th query (metatool's 10,528 are
// cut to about 2,000 for speed) and the bounds under which
// TestBenchHoldOut fails: a little past what the calibration reaches.
var holdOutSets = []struct {
	name   string
	sample int
	// minKept is the least share of queries whose gold top tool scores at
	// least the threshold; maxAbsent the largest share of queries whose
	// top tool scores at least the noise floor with the gold held out.
	// Most held-out top tools here are siblings of the gold one (see
	// calibrate.go), so maxAbsent is near 1 where they dominate.
	minKept, maxAbsent float64
}{
	// bfcl reached 0.679 and 0.985 when these bounds were set, then
	// 0.991: eleven of its Chinese and Korean requests found English tools
	// once common tool words were translated (the weather requests then
	// reach another weather tool with the gold held out), and scoring
	// upstreams for the whole request rather than each clause moved six
	// more multi-clause requests past the floor and one below it.
	{"bfcl", 1, 0.66, 0.995},
	{"seal_tools", 1, 0.94, 1},  // reached 0.960 and 0.997
	{"metatool", 5, 0.41, 0.92}, // reached 0.426 and 0.889
}

// raceEnabled is set by the race detector's build (race_test.go).
var raceEnabled bool

func TestBenchHoldOut(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped under -short")
	}
	// Each held-out ranking re-indexes the gold tools' upstreams, which
	// the race detector slows tenfold: with it, a quarter of the queries
	// check the code, and the bounds are checked only without it.
	thin := 1
	if raceEnabled {
		thin = 4
	}
	var reports []HoldOutReport
	start := time.Now()
	for _, set := range holdOutSets {
		ds := loadDataset(t, set.name)
		var qs []Query
		for i := 0; i < len(ds.queries); i += set.sample * thin {
			qs = append(qs, ds.queries[i])
		}
		rep := HoldOut(BuildIndex(ds.tools, routing.IndexOptions{}), ds.tools, qs)
		rep.Name = set.name
		reports = append(reports, rep)
		if raceEnabled {
			continue
		}
		if rep.GoldKept < set.minKept {
			t.Errorf("%s: gold top-1 kept for %.3f of queries, want at least %.3f", set.name, rep.GoldKept, set.minKept)
		}
		if rep.Absent.AboveFloor > set.maxAbsent {
			t.Errorf("%s: with the gold held out the top tool passes the noise floor for %.3f of queries, want at most %.3f",
				set.name, rep.Absent.AboveFloor, set.maxAbsent)
		}
	}
	t.Logf("top-1 scores with the gold tools present and held out (%.2f floor, %.2f threshold; %v):\n%s",
		routing.DefaultNoiseFloor, routing.DefaultThreshold, time.Since(start).Round(time.Millisecond), HoldOutTable(reports...))
}

func TestHoldOutScoresWithoutTheGold(t *testing.T) {
	tools := []routing.Tool{
		{Name: "get_weather", Upstream: "weather", Domain: "weather", Description: "Get the weather forecast for a city."},
		{Name: "city_info", Upstream: "geo", Domain: "geo", Description: "Facts about a city: population, area."},
		{Name: "read_file", Upstream: "fs", Domain: "fs", Description: "Read a file."},
	}
	ix := BuildIndex(tools, routing.IndexOptions{})
	queries := []Query{
		{ID: "1", Query: "weather forecast for the city", Gold: []string{"get_weather"}},
		{ID: "2", Query: "read the file notes.txt", Gold: []string{"read_file"}},
		{ID: "3", Query: "no gold"},
	}
	rep := HoldOut(ix, tools, queries)
	if rep.Queries != 2 || rep.GoldTop1 != 1 || rep.GoldKept != 1 || rep.Present.N != 2 || rep.Absent.N != 2 {
		t.Fatalf("report %+v: want 2 queries, both with the gold on top and kept, both ranked held out", rep)
	}
	// Held out, query 1 finds city_info by "city" alone, under the gold
	// tools' scores, and query 2 finds nothing (a score of 0).
	if rep.Absent.P10 != 0 || rep.Absent.P90 == 0 || rep.Absent.P90 >= rep.Present.P10 || rep.Absent.AboveFloor != 0.5 {
		t.Errorf("held-out scores %+v, gold scores %+v: want one 0 and one under the gold ones", rep.Absent, rep.Present)
	}
	if got := ix.Len(); got != len(tools) {
		t.Errorf("HoldOut changed the index: %d tools, want %d", got, len(tools))
	}
	rep.Name = "fixture"
	if s := HoldOutTable(rep); !strings.Contains(s, "absent") || !strings.Contains(s, "fixture") {
		t.Errorf("HoldOutTable = %q, want the header and the set", s)
	}
}
