package routing

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// lexTool returns a tool with a schema of the given parameter names and
// descriptions (name, description, name, description ...).
func lexTool(name, desc string, params ...string) Tool {
	props := map[string]any{}
	for i := 0; i+1 < len(params); i += 2 {
		props[params[i]] = map[string]any{"type": "string", "description": params[i+1]}
	}
	schema, _ := json.Marshal(map[string]any{"type": "object", "properties": props})
	return Tool{Name: name, Description: desc, InputSchema: schema}
}

var (
	lexWeather = []Tool{
		lexTool("weather_forecast", "Get the weather forecast for a city.", "city", "City name"),
		lexTool("weather_alerts", "List severe weather alerts for a region.", "region", "Region code"),
	}
	lexFiles = []Tool{
		lexTool("read_file", "Read a file from disk.", "path", "File path"),
		lexTool("write_file", "Write text to a file.", "path", "File path", "content", "Text to write"),
		lexTool("listDirectory", "List the entries of a folder.", "path", "Folder path"),
	}
	lexMail = []Tool{
		lexTool("send_email", "Send an email message to a recipient.", "to", "Recipient address", "body", "Message text"),
	}
)

// lexIndex returns an index of the upstreams given as name, tools pairs.
func lexIndex(opts IndexOptions, ups ...any) *Index {
	ix := NewIndex(opts)
	for i := 0; i+1 < len(ups); i += 2 {
		ix.SetUpstream(ups[i].(string), ups[i+1].([]Tool))
	}
	return ix
}

func lexNames(hits []Hit) []string {
	names := make([]string, len(hits))
	for i, h := range hits {
		names[i] = h.Name
	}
	return names
}

func TestSetUpstreamReplacesOneUpstream(t *testing.T) {
	// Replacing an upstream in place must leave the index as if built
	// afresh with the new tools: other upstreams' scores change only
	// through the corpus statistics, exactly as a rebuild would.
	ix := lexIndex(IndexOptions{}, "weather", lexWeather, "files", lexFiles)
	ix.Search("weather", 5) // refresh once before the change
	ix.SetUpstream("weather", []Tool{lexTool("forecast_rain", "Chance of rain tomorrow.", "city", "City name")})
	fresh := lexIndex(IndexOptions{}, "files", lexFiles, "weather", []Tool{lexTool("forecast_rain", "Chance of rain tomorrow.", "city", "City name")})

	for _, q := range []string{"read a file", "list the folder entries", "rain forecast for my city", "weather alerts"} {
		got, want := ix.Search(q, 0), fresh.Search(q, 0)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Search(%q) after SetUpstream differs from a fresh index (-fresh +incremental):\n%s", q, diff)
		}
	}
	if _, ok := ix.Tool("weather_forecast"); ok {
		t.Errorf("Tool(weather_forecast) found after its upstream was replaced")
	}
	if tl, ok := ix.Tool("forecast_rain"); !ok || tl.Upstream != "weather" {
		t.Errorf("Tool(forecast_rain) = %+v, %v; want it from upstream weather", tl, ok)
	}
	if got, want := ix.Len(), len(lexFiles)+1; got != want {
		t.Errorf("Len() = %d, want %d", got, want)
	}
}

func TestSetUpstreamOnlyChangesCorpusStatistics(t *testing.T) {
	// A query that matches only the files upstream: adding and removing
	// a mail upstream moves its scores only through N and the averages.
	ix := lexIndex(IndexOptions{}, "files", lexFiles)
	before := ix.Search("read file", 0)
	ix.SetUpstream("mail", lexMail)
	during := ix.Search("read file", 0)
	ix.SetUpstream("mail", nil)
	after := ix.Search("read file", 0)
	if diff := cmp.Diff(lexNames(before), lexNames(during)); diff != "" {
		t.Errorf("ranking changed when another upstream was added (-before +during):\n%s", diff)
	}
	if diff := cmp.Diff(before, after); diff != "" {
		t.Errorf("hits differ after another upstream was added and removed (-before +after):\n%s", diff)
	}
}

func TestSetUpstreamRemoves(t *testing.T) {
	ix := lexIndex(IndexOptions{}, "weather", lexWeather, "files", lexFiles)
	ix.SetUpstream("weather", nil)
	if got := ix.Search("weather forecast", 0); len(got) != 0 {
		t.Errorf("Search after removing the upstream = %v, want no hits", lexNames(got))
	}
	if got, want := ix.Len(), len(lexFiles); got != want {
		t.Errorf("Len() = %d, want %d", got, want)
	}
	ix.SetUpstream("files", []Tool{})
	if got := ix.Len(); got != 0 {
		t.Errorf("Len() after removing everything = %d, want 0", got)
	}
	if got := ix.Search("read file", 0); got != nil {
		t.Errorf("Search on an empty index = %v, want nil", got)
	}
	// Reusing freed document slots and terms must not resurrect anything.
	ix.SetUpstream("mail", lexMail)
	if got := lexNames(ix.Search("send email", 0)); !slices.Equal(got, []string{"send_email"}) {
		t.Errorf("Search after re-adding = %v, want [send_email]", got)
	}
}

func TestSetUpstreamTakesOverName(t *testing.T) {
	ix := lexIndex(IndexOptions{}, "a", []Tool{lexTool("shared", "Old tool.")})
	ix.SetUpstream("b", []Tool{lexTool("shared", "New tool."), lexTool("shared", "Duplicate, ignored.")})
	tl, ok := ix.Tool("shared")
	if !ok || tl.Upstream != "b" || tl.Description != "New tool." {
		t.Fatalf("Tool(shared) = %+v, %v; want the first tool of upstream b", tl, ok)
	}
	if got := ix.Len(); got != 1 {
		t.Errorf("Len() = %d, want 1", got)
	}
	ix.SetUpstream("a", nil) // must not remove b's tool
	if _, ok := ix.Tool("shared"); !ok {
		t.Errorf("removing upstream a removed upstream b's tool")
	}
}

func TestSearchConcurrentWithSetUpstream(t *testing.T) {
	ix := lexIndex(IndexOptions{}, "files", lexFiles)
	var searchers sync.WaitGroup
	for range 4 {
		searchers.Go(func() {
			for range 300 {
				hits := ix.Search("read the weather forecast file", 10)
				if len(hits) == 0 || hits[0].Name != "read_file" && hits[0].Name != "weather_forecast" {
					t.Errorf("Search during SetUpstream = %v, want read_file or weather_forecast first", lexNames(hits))
					return
				}
			}
		})
	}
	done := make(chan struct{})
	go func() { searchers.Wait(); close(done) }()
	for i := 0; ; i++ {
		select {
		case <-done:
			return
		default:
		}
		if i%2 == 0 {
			ix.SetUpstream("weather", lexWeather)
		} else {
			ix.SetUpstream("weather", nil)
		}
	}
}

func TestScoresCalibrated(t *testing.T) {
	ix := lexIndex(IndexOptions{}, "weather", lexWeather, "files", lexFiles, "mail", lexMail)
	for _, q := range []string{
		"weather forecast", "read a file then email it to Bob. Also list the folder",
		"send", "zzz unknown words", "file file file file", "天气",
	} {
		hits := ix.Search(q, 0)
		for i, h := range hits {
			if !(h.Score >= 0 && h.Score <= 1) || math.IsNaN(h.Score) {
				t.Errorf("Search(%q)[%d] = %+v: score outside [0, 1]", q, i, h)
			}
			if h.Raw <= 0 {
				t.Errorf("Search(%q)[%d] = %+v: raw score not positive", q, i, h)
			}
			if i > 0 && h.Score > hits[i-1].Score {
				t.Errorf("Search(%q): score rises from %v to %v at rank %d", q, hits[i-1].Score, h.Score, i+1)
			}
		}
	}
	top := ix.Search("weather forecast for a city", 1)
	if len(top) != 1 || top[0].Score < 0.35 {
		t.Errorf("a full match scores %v, want at least the 0.35 threshold", top)
	}
	weak := ix.Search("severe region code path", 0)
	if last := weak[len(weak)-1]; last.Score >= 0.35 {
		t.Errorf("a weak match behind the top scores %v, want under 0.35", last)
	}
}

func TestCalibrateIsMonotone(t *testing.T) {
	prev := -1.0
	for c := 0.0; c <= 1; c += 0.1 {
		s := calibrate(evidence{coverage: c, relative: 1})
		if s <= prev || s < 0 || s > 1 {
			t.Errorf("calibrate(coverage %.1f) = %v after %v: want rising within [0, 1]", c, s, prev)
		}
		prev = s
	}
	if lo, hi := calibrate(evidence{coverage: 0.5, relative: 0.5}), calibrate(evidence{coverage: 0.5, relative: 1}); lo >= hi {
		t.Errorf("calibrate with relative 0.5 = %v, with 1 = %v: want the top tool higher", lo, hi)
	}
}

func TestMoreNameMatchesRankHigher(t *testing.T) {
	desc := "Returns data for the given place."
	ix := lexIndex(IndexOptions{}, "u", []Tool{
		lexTool("fetch_data", desc),
		lexTool("fetch_weather", desc),
		lexTool("fetch_weather_forecast", desc),
		lexTool("weather_forecast_hourly_detail", desc),
	})
	hits := ix.Search("weather forecast", 0)
	want := []string{"fetch_weather_forecast", "weather_forecast_hourly_detail", "fetch_weather"}
	if diff := cmp.Diff(want, lexNames(hits)); diff != "" {
		t.Errorf("ranking mismatch (-want +got):\n%s", diff)
	}
	if hits[1].Score <= hits[2].Score {
		t.Errorf("two name matches score %v, one %v; want more", hits[1].Score, hits[2].Score)
	}
}

func TestCJKQueryMatchesCJKDescription(t *testing.T) {
	ix := lexIndex(IndexOptions{}, "u", []Tool{
		lexTool("forecast", "查询城市的天气预报"),
		lexTool("news", "获取今天的新闻头条"),
		lexTool("weather", "Weather forecast for a city."),
	})
	hits := ix.Search("明天北京的天气预报", 3)
	if len(hits) == 0 || hits[0].Name != "forecast" {
		t.Errorf("Search(天气预报) = %v, want forecast first", lexNames(hits))
	}
}

func TestIdentifierSplitting(t *testing.T) {
	ix := lexIndex(IndexOptions{}, "fs", []Tool{
		lexTool("listDirectory", "Show entries."),
		lexTool("list_directory", "Show entries."),
		lexTool("fs.list-directory", "Show entries."),
		lexTool("list_dir", "Show entries."),
		lexTool("read_file", "Read a file."),
	})
	hits := lexNames(ix.Search("list directory", 0))
	if len(hits) != 4 {
		t.Fatalf("Search(list directory) = %v, want the four list tools", hits)
	}
	if !slices.Contains(hits[:3], "listDirectory") || !slices.Contains(hits[:3], "list_directory") || !slices.Contains(hits[:3], "fs.list-directory") {
		t.Errorf("Search(list directory) = %v, want the three list-directory spellings first", hits)
	}
	if hits[3] != "list_dir" {
		t.Errorf("Search(list directory) = %v, want list_dir last (dir is no stem of directory)", hits)
	}
}

func TestSearchFindsSynonymsAndParameters(t *testing.T) {
	ix := lexIndex(IndexOptions{}, "weather", lexWeather, "files", lexFiles, "mail", lexMail)
	for _, tc := range []struct{ query, want string }{
		{"remove nothing but show the folder contents", "listDirectory"}, // folder ↔ directory, description
		{"what is the recipient address", "send_email"},                  // parameter description
		{"open a document", "read_file"},                                 // document ↔ file
	} {
		if hits := ix.Search(tc.query, 1); len(hits) == 0 || hits[0].Name != tc.want {
			t.Errorf("Search(%q) = %v, want %s first", tc.query, lexNames(hits), tc.want)
		}
	}
}

func TestMultiClauseRequestCoversEachClause(t *testing.T) {
	var tools []Tool
	for i, v := range []string{"Get", "Fetch", "Retrieve", "Estimate", "Report"} {
		tools = append(tools, lexTool(fmt.Sprintf("solar_radiation_%d", i), v+" the solar radiation data for a location.", "location", "City or region"))
	}
	tools = append(tools, lexTool("water_needs", "Calculate the water needs of a population.", "population", "Number of people"))
	q := "Retrieve the solar radiation data for a location, daily. Then calculate the water needs of a population."
	for _, tc := range []struct {
		name    string
		opts    IndexOptions
		maxRank int
	}{
		{"diversified", IndexOptions{}, 2},
		{"whole request only", IndexOptions{Diversity: -1}, len(tools)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hits := lexNames(lexIndex(tc.opts, "u", tools).Search(q, 0))
			if r := slices.Index(hits, "water_needs") + 1; r == 0 || r > tc.maxRank {
				t.Errorf("water_needs at rank %d of %v, want within %d", r, hits, tc.maxRank)
			}
		})
	}
}

func TestSearchEdges(t *testing.T) {
	if got := NewIndex(IndexOptions{}).Search("anything", 5); got != nil {
		t.Errorf("Search on an empty index = %v, want nil", got)
	}
	ix := lexIndex(IndexOptions{}, "weather", lexWeather, "files", lexFiles, "mail", lexMail)
	if got := ix.Search("can you please tell me the", 5); got != nil {
		t.Errorf("Search with only stop and filler words = %v, want nil", got)
	}
	if got := ix.Search("file", 1); len(got) != 1 {
		t.Errorf("Search(file, 1) returned %d hits, want 1", len(got))
	}
	all := ix.Search("file", 0)
	if len(all) != 3 {
		t.Errorf("Search(file, 0) = %v, want every tool that mentions a file", lexNames(all))
	}
	if got := ix.Search("file", 100); !cmp.Equal(got, all) {
		t.Errorf("Search(file, 100) = %v, want the same as k = 0: %v", got, all)
	}
}

func TestToolWithBadSchemaIsIndexed(t *testing.T) {
	ix := NewIndex(IndexOptions{})
	ix.SetUpstream("u", []Tool{{Name: "odd_tool", Description: "Does odd things.", InputSchema: json.RawMessage(`{"properties": [1,`)}})
	if hits := ix.Search("odd things", 1); len(hits) != 1 {
		t.Errorf("Search = %v, want the tool found by name and description", lexNames(hits))
	}
}

func TestWalkSchema(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{
		"unit":{"type":"string","description":"Temperature unit","enum":["celsius","fahrenheit"]},
		"filter":{"type":"object","properties":{"minRating":{"type":"number","title":"Lowest rating"}}},
		"tags":{"type":"array","items":{"type":"object","properties":{"tagName":{"type":"string"}}}},
		"target":{"anyOf":[{"type":"object","properties":{"fileId":{"type":"string"}}}]}}}`)
	var got [numFields][]string
	walkSchema(schema, func(f field, text string) { got[f] = append(got[f], text) })
	want := [numFields][]string{
		fieldParam:     {"filter", "minRating", "tags", "tagName", "target", "fileId", "unit"},
		fieldParamDesc: {"Lowest rating", "Temperature unit", "celsius", "fahrenheit"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("walkSchema mismatch (-want +got):\n%s", diff)
	}
}

// TestSearchIsIndependentOfEarlierSearches pins that a search reuses its
// scratch space without carrying anything over: each request ranks the
// same first and after others, long and multi-clause ones included.
func TestSearchIsIndependentOfEarlierSearches(t *testing.T) {
	queries := []string{
		"find the file, then search it for the word and also look up the notes",
		"remember that Alice works at Acme and then recall what I stored about her",
		"get the weather for Paris. Then list the alerts; finally fetch the page at https://example.com",
		"divide 10 by 4 and take the square root",
		"delete the file",
		"read notes.txt, write a summary to summary.md, then send it by email to bob@example.com",
	}
	fresh := make([][]Hit, len(queries))
	for i, q := range queries {
		fresh[i] = seedRouter(t).Rank(t.Context(), q, 10)
	}
	r := seedRouter(t)
	for round := range 2 {
		for i := range queries {
			i = len(queries) - 1 - i // another order than the fresh runs'
			if got := r.Rank(t.Context(), queries[i], 10); !cmp.Equal(got, fresh[i]) {
				t.Errorf("round %d, %q: ranked after other searches differs from a fresh search:\n%s", round, queries[i], cmp.Diff(fresh[i], got))
			}
		}
	}
}
