package eval

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/mcp-router/mcp-router/routing"
)

// TestBenchLanguages measures the lexical index where a request and its
// tool are written in different scripts: etom's requests (in English)
// whose gold tool is described partly in Chinese (its descriptions are
// English, but its parameters or server say what they are in Chinese),
// and bfcl's and metatool's requests that hold Chinese, Japanese or
// Korean, all of them and those written mostly in it. metatool's are
// English requests with a few stray characters (mis-decoded punctuation,
// a quoted word); bfcl's are mostly people's requests in Chinese and
// Korean to English tools. Each subset is ranked against its whole
// catalog.
func TestBenchLanguages(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped under -short")
	}
	var reps []Report
	run := func(name string, ds dataset, qs []Query, minR5 float64) {
		rep, _ := Run(IndexRanker{Index: BuildIndex(ds.tools, routing.IndexOptions{})}, qs, Options{})
		rep.Name = name
		reps = append(reps, rep)
		if len(qs) == 0 {
			t.Errorf("%s: no requests selected", name)
		}
		if rep.R5 < minR5 {
			t.Errorf("%s: R@5 %.3f over %d requests, want at least %.3f", name, rep.R5, rep.Queries, minR5)
		}
	}

	etom := loadDataset(t, "etom")
	cjkTool := map[string]bool{}
	for _, tl := range etom.tools {
		if cjkShare(toolText(tl)) > 0 {
			cjkTool[tl.Name] = true
		}
	}
	run("etom zh tool", etom, slices.DeleteFunc(slices.Clone(etom.queries), func(q Query) bool {
		return !slices.ContainsFunc(q.Groups(), func(g []string) bool { return slices.ContainsFunc(g, func(n string) bool { return cjkTool[n] }) })
	}), minR5EtomCJKTool)

	for _, set := range []struct {
		name               string
		minR5, minR5Mostly float64
	}{{"bfcl", minR5BfclCJK, minR5BfclMostlyCJK}, {"metatool", minR5MetatoolCJK, -1}} {
		ds := loadDataset(t, set.name)
		withCJK := slices.DeleteFunc(slices.Clone(ds.queries), func(q Query) bool { return cjkShare(q.Query) == 0 })
		run(set.name+" cjk", ds, withCJK, set.minR5)
		if set.minR5Mostly >= 0 {
			mostly := slices.DeleteFunc(slices.Clone(withCJK), func(q Query) bool { return cjkShare(q.Query) < 0.5 })
			run(set.name+" cjk>50%", ds, mostly, set.minR5Mostly)
		}
	}
	t.Logf("lexical index where request and tool differ in script:\n%s", Table(reps...))
}

// Floors of TestBenchLanguages, a little under what the index reaches.
// Each subset is small (50, 20, 16 and 17 requests), so one request moves
// R@5 by 0.02 to 0.06. Reached: etom 0.888; bfcl 0.800, and 0.750 of
// those mostly in CJK (0.650 and 0.562 before the translation table grew
// from 70 to 200 lines of tool vocabulary; 0.450 and 0.312 without it);
// metatool 0.471 (0.529 before typo correction, WordNet's synonyms and
// server scores went: one request of 17), which no table moves: its
// characters are noise, not words.
const (
	minR5EtomCJKTool   = 0.86
	minR5BfclCJK       = 0.75
	minR5BfclMostlyCJK = 0.68
	minR5MetatoolCJK   = 0.45
)

// cjkShare returns the share of the letters of s that are Han, Kana or
// Hangul.
func cjkShare(s string) float64 {
	var letters, cjk int
	for _, r := range s {
		if !unicode.IsLetter(r) {
			continue
		}
		letters++
		if unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul) {
			cjk++
		}
	}
	return float64(cjk) / float64(max(1, letters))
}

// toolText returns the text a tool is described by: its description, its
// server's, and the strings of its input schema.
func toolText(tl routing.Tool) string {
	var b strings.Builder
	b.WriteString(tl.Description)
	b.WriteString(" ")
	b.WriteString(tl.Server)
	var schema any
	_ = json.Unmarshal(tl.InputSchema, &schema)
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			b.WriteString(" ")
			b.WriteString(v)
		case []any:
			for _, e := range v {
				walk(e)
			}
		case map[string]any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	walk(schema)
	return b.String()
}
