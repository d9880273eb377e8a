// Package learn derives the routing package's learned table (learned.txt)
// from public requests paired with the tools that serve them: which words
// of people's requests point to which words of tool texts ("forecast" for
// a request that says "weather", "recipe" for "cook").
//
// It is a translation table counted over tools, not requests: a request
// word w points to a tool word v when, of the distinct tools that requests
// with w were served by, at least MinShare hold v in their name or
// description, at least MinTools of them do, and v is at least MinLift
// times likelier among them than among all the tools the examples name.
// Counting tools rather than requests keeps a set that asks for one tool
// a thousand ways from teaching that tool's words as meaning.
package learn

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/mcp-router/mcp-router/routing"
)

// Example is one request and the tools that serve it.
type Example struct {
	Query string
	Gold  []routing.Tool
}

// Options are the table's thresholds; a zero field takes its default.
type Options struct {
	MinTools int     // distinct tools that must show a pair; default 3
	MinShare float64 // share of w's tools that must hold v; default 0.3
	MinLift  float64 // how much likelier v is among w's tools; default 5
	PerWord  int     // targets kept per request word, best first; default 3
	MaxDF    float64 // share of all tools a target may be in at most; default 0.05
}

func (o Options) withDefaults() Options {
	if o.MinTools == 0 {
		o.MinTools = 3
	}
	if o.MinShare == 0 {
		o.MinShare = 0.3
	}
	if o.MinLift == 0 {
		o.MinLift = 5
	}
	if o.PerWord == 0 {
		o.PerWord = 3
	}
	if o.MaxDF == 0 {
		o.MaxDF = 0.05
	}
	return o
}

// Entry is one request word and the tool words it points to, best first.
type Entry struct {
	Word    string
	Targets []string
}

// counts are the tool-level statistics Learn draws the table from.
type counts struct {
	toolWords map[string]map[string]bool // tool key → its text's terms
	wordTools map[string]map[string]bool // request term → the tools it was served by
	df        map[string]int             // tool term → tools holding it
}

// Learn derives the table from examples.
func Learn(examples []Example, opts Options) []Entry {
	opts = opts.withDefaults()
	c := count(examples)
	var out []Entry
	for w, tools := range c.wordTools {
		if len(tools) < opts.MinTools {
			continue
		}
		if e, ok := c.entry(w, tools, opts); ok {
			out = append(out, e)
		}
	}
	slices.SortFunc(out, func(a, b Entry) int { return strings.Compare(a.Word, b.Word) })
	return out
}

func count(examples []Example) counts {
	tok := routing.NewTokenizer(routing.TokenizerOptions{})
	c := counts{toolWords: map[string]map[string]bool{}, wordTools: map[string]map[string]bool{}, df: map[string]int{}}
	for _, ex := range examples {
		words := tok.Tokens(ex.Query)
		for _, t := range ex.Gold {
			key := t.Name + "\x00" + t.Description
			if c.toolWords[key] == nil {
				set := map[string]bool{}
				for _, v := range tok.Tokens(t.Name + " " + t.Description) {
					set[v] = true
				}
				c.toolWords[key] = set
				for v := range set {
					c.df[v]++
				}
			}
			for _, w := range words {
				if c.wordTools[w] == nil {
					c.wordTools[w] = map[string]bool{}
				}
				c.wordTools[w][key] = true
			}
		}
	}
	return c
}

// entry returns w's targets, when it has any.
func (c counts) entry(w string, tools map[string]bool, opts Options) (Entry, bool) {
	support := map[string]int{}
	for key := range tools {
		for v := range c.toolWords[key] {
			support[v]++
		}
	}
	n, total := float64(len(tools)), float64(len(c.toolWords))
	type scored struct {
		v string
		s float64
	}
	var keep []scored
	for v, s := range support {
		share := float64(s) / n
		lift := share / (float64(c.df[v]) / total)
		if v == w || s < opts.MinTools || share < opts.MinShare || lift < opts.MinLift || float64(c.df[v]) > opts.MaxDF*total {
			continue
		}
		keep = append(keep, scored{v, share * math.Log(lift)})
	}
	if len(keep) == 0 {
		return Entry{}, false
	}
	slices.SortFunc(keep, func(a, b scored) int { return cmp.Or(cmp.Compare(b.s, a.s), strings.Compare(a.v, b.v)) })
	e := Entry{Word: w}
	for _, k := range keep[:min(len(keep), opts.PerWord)] {
		e.Targets = append(e.Targets, k.v)
	}
	return e, true
}

// Format writes entries as the routing package reads them: after header
// (each of its lines a # comment), one line a word,
//
//	word <TAB> targets separated by spaces
func Format(header string, entries []Entry) string {
	var b strings.Builder
	for line := range strings.Lines(header) {
		fmt.Fprintf(&b, "# %s", line)
	}
	if header != "" && !strings.HasSuffix(header, "\n") {
		b.WriteByte('\n')
	}
	for _, e := range entries {
		fmt.Fprintf(&b, "%s\t%s\n", e.Word, strings.Join(e.Targets, " "))
	}
	return b.String()
}

// Examples pairs each request of queries with its gold tools, found in
// tools by name (a name tools lacks is skipped).
func Examples(tools []routing.Tool, queries []string, gold [][]string) []Example {
	byName := make(map[string]routing.Tool, len(tools))
	for _, t := range tools {
		byName[t.Name] = t
	}
	out := make([]Example, 0, len(queries))
	for i, q := range queries {
		ex := Example{Query: q}
		for _, name := range gold[i] {
			if t, ok := byName[name]; ok {
				ex.Gold = append(ex.Gold, t)
			}
		}
		if len(ex.Gold) > 0 {
			out = append(out, ex)
		}
	}
	return out
}
