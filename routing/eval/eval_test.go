package eval

import (
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/mcp-router/mcp-router/routing"
)

// fixedRanker returns a fixed ranking per query.
type fixedRanker map[string][]string

func (f fixedRanker) Rank(query string, k int) []string { return f[query] }

var fixtureQueries = []Query{
	{ID: "q1", Query: "one", Gold: []string{"a"}, Kind: "single"},
	{ID: "q2", Query: "two", Gold: []string{"a", "d"}, Kind: "multi"},
	{ID: "q3", Query: "groups", Gold: []string{"p", "r"}, GoldGroups: [][]string{{"p", "q"}, {"r"}}, Kind: "multi"},
	{ID: "q4", Query: "miss", Gold: []string{"z"}, Kind: "single"},
	{ID: "q5", Query: "no gold", Kind: "single"},
}

var fixtureRanker = fixedRanker{
	"one":     {"b", "a", "c"},                // gold at 2
	"two":     {"a", "x", "y", "z", "w", "d"}, // gold at 1 and 6
	"groups":  {"q", "s", "p", "t", "u"},      // group {p,q} at 1 (once), {r} missing
	"miss":    {"a", "b"},                     // gold absent
	"no gold": {"a"},
}

func TestRunMetricsByHand(t *testing.T) {
	rep, rankings := Run(fixtureRanker, fixtureQueries, Options{})
	inv := 1 / math.Log2(3) // DCG of a hit at rank 2
	two := 1 / (1 + inv)    // NDCG@5 of one of two groups at rank 1
	want := Report{
		Queries: 4, Single: 2, Multi: 2, Skipped: 1,
		R1:    (0 + 0.5 + 0.5 + 0) / 4,
		R5:    (1 + 0.5 + 0.5 + 0) / 4,
		R10:   (1 + 1 + 0.5 + 0) / 4,
		NDCG5: (inv + two + two + 0) / 4,
		C5:    (1 + 0 + 0 + 0) / 4.0,
		C10:   (1 + 1 + 0 + 0) / 4.0,
		MRR:   (0.5 + 1 + 1 + 0) / 4,
	}
	opts := []cmp.Option{cmpopts.EquateApprox(0, 1e-12), cmpopts.IgnoreFields(Report{}, "P50", "P99")}
	if diff := cmp.Diff(want, rep, opts...); diff != "" {
		t.Errorf("Run report mismatch (-want +got):\n%s", diff)
	}
	if rep.P50 < 0 || rep.P99 < rep.P50 {
		t.Errorf("latency p50 %v, p99 %v: want 0 <= p50 <= p99", rep.P50, rep.P99)
	}
	wantRankings := []Ranking{
		{ID: "q1", Ranked: []string{"b", "a", "c"}},
		{ID: "q2", Ranked: []string{"a", "x", "y", "z", "w", "d"}},
		{ID: "q3", Ranked: []string{"q", "s", "p", "t", "u"}},
		{ID: "q4", Ranked: []string{"a", "b"}},
		{ID: "q5", Ranked: []string{"a"}},
	}
	if diff := cmp.Diff(wantRankings, rankings); diff != "" {
		t.Errorf("rankings mismatch (-want +got):\n%s", diff)
	}
}

func TestRunDepthCutsRankings(t *testing.T) {
	rep, rankings := Run(fixtureRanker, fixtureQueries[1:2], Options{K: 3})
	if got := rankings[0].Ranked; !cmp.Equal(got, []string{"a", "x", "y"}) {
		t.Errorf("ranking at depth 3 = %v, want [a x y]", got)
	}
	if rep.R10 != 0.5 || rep.C10 != 0 {
		t.Errorf("R@10 %v, C@10 %v at depth 3: want 0.5 and 0 (d at rank 6 is past the depth)", rep.R10, rep.C10)
	}
}

func TestReportTable(t *testing.T) {
	rep, _ := Run(fixtureRanker, fixtureQueries, Options{})
	rep.Name = "fixture"
	s := rep.String()
	for _, want := range []string{"R@5", "NDCG@5", "C@10", "MRR", "p99", "fixture", "0.500", "0.625"} {
		if !strings.Contains(s, want) {
			t.Errorf("Report.String() = %q, want it to contain %q", s, want)
		}
	}
}

func TestLoadTools(t *testing.T) {
	in := `{"name": "get_weather", "description": "Weather.", "input_schema": {"type": "object"}, "server": "weather", "extra": 1}

{"name": "plain", "description": "No server.", "input_schema": {}, "server": ""}
`
	tools, err := LoadTools(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []routing.Tool{
		{Name: "get_weather", Upstream: "weather", Domain: "weather", Description: "Weather.", InputSchema: []byte(`{"type": "object"}`)},
		{Name: "plain", Description: "No server.", InputSchema: []byte(`{}`)},
	}
	if diff := cmp.Diff(want, tools); diff != "" {
		t.Errorf("LoadTools mismatch (-want +got):\n%s", diff)
	}
}

func TestLoadErrorsNameTheLine(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
		load           func(string) error
	}{
		{"bad tool JSON", "{\"name\": \"a\"}\n\n{\"name\": ", "line 3", func(s string) error { _, err := LoadTools(strings.NewReader(s)); return err }},
		{"tool without name", "{\"name\": \"a\"}\n{\"description\": \"x\"}", "line 2: tool has no name", func(s string) error { _, err := LoadTools(strings.NewReader(s)); return err }},
		{"bad query JSON", "{\"id\": \"q\"}\nnot json", "line 2", func(s string) error { _, err := LoadQueries(strings.NewReader(s)); return err }},
		{"query without id", "{\"query\": \"x\"}", "line 1: query has no id", func(s string) error { _, err := LoadQueries(strings.NewReader(s)); return err }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.load(tc.in)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestLoadQueries(t *testing.T) {
	in := `{"id": "1", "query": "q", "gold": ["a", "b"], "kind": "multi", "calls": []}
{"id": "2", "query": "r", "gold": ["a"], "gold_groups": [["a", "a2"]], "kind": "single"}`
	qs, err := LoadQueries(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([][]string{{"a"}, {"b"}}, qs[0].Groups()); diff != "" {
		t.Errorf("groups without gold_groups mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([][]string{{"a", "a2"}}, qs[1].Groups()); diff != "" {
		t.Errorf("groups with gold_groups mismatch (-want +got):\n%s", diff)
	}
}

func TestIndexRanker(t *testing.T) {
	tools, err := LoadTools(strings.NewReader(`{"name": "get_weather", "description": "Get the weather forecast.", "server": "weather"}
{"name": "read_file", "description": "Read a file.", "server": "fs"}`))
	if err != nil {
		t.Fatal(err)
	}
	r := IndexRanker{BuildIndex(tools, routing.IndexOptions{})}
	if got := r.Rank("what's the weather forecast", 10); !cmp.Equal(got, []string{"get_weather"}) {
		t.Errorf("Rank = %v, want [get_weather]", got)
	}
}
