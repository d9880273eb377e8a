// The learner of TestLearnedHeldOut derives a routing.Learned table from public requests
// paired with the tools that serve them: which words of people's requests
// point to which words of tool texts ("show" for a request that says
// "drama", "game" for "multiplayer"). It is the generator the held-out
// measure in routing/eval (TestLearnedHeldOut) runs on some shared sets
// and judges on the others; no table learned by it is built in, since
// none paid on the sets it was not learned from (docs/routing.md).
//
// It is a translation table counted over tools, not requests: a request
// word w points to a tool word v when, of the distinct tools that requests
// with w were served by, at least MinShare hold v in their name or
// description, at least MinTools of them do, and v is at least MinLift
// times likelier among them than among all the tools the examples name.
// Counting tools rather than requests keeps a set that asks for one tool
// a thousand ways from teaching that tool's words as meaning.

package eval

import (
	"cmp"
	"math"
	"slices"
	"strings"

	"github.com/mcp-router/mcp-router/routing"
)

// learnExample is one request and the tools that serve it.
type learnExample struct {
	Query string
	Gold  []routing.Tool
}

// learnOptions are the table's thresholds; a zero field takes its default.
// The defaults are the best of the settings TestLearnedHeldOut tried
// (docs/routing.md).
type learnOptions struct {
	MinTools int     // distinct tools that must show a pair; default 3
	MinShare float64 // share of w's tools that must hold v; default 0.5
	MinLift  float64 // how much likelier v is among w's tools; default 10
	PerWord  int     // targets kept per request word, best first; default 2
	MaxDF    float64 // share of all tools a target may be in at most; default 0.02
}

func (o learnOptions) withDefaults() learnOptions {
	if o.MinTools == 0 {
		o.MinTools = 3
	}
	if o.MinShare == 0 {
		o.MinShare = 0.5
	}
	if o.MinLift == 0 {
		o.MinLift = 10
	}
	if o.PerWord == 0 {
		o.PerWord = 2
	}
	if o.MaxDF == 0 {
		o.MaxDF = 0.02
	}
	return o
}

// learnCounts are the tool-level statistics learnTable draws the table from.
type learnCounts struct {
	toolWords map[string]map[string]bool // tool key → its text's terms
	wordTools map[string]map[string]bool // request term → the tools it was served by
	df        map[string]int             // tool term → tools holding it
}

// learnTable derives the table from examples.
func learnTable(examples []learnExample, opts learnOptions) routing.Learned {
	opts = opts.withDefaults()
	c := countLearned(examples)
	out := routing.Learned{}
	for w, tools := range c.wordTools {
		if len(tools) < opts.MinTools {
			continue
		}
		if targets := c.targets(w, tools, opts); len(targets) > 0 {
			out[w] = targets
		}
	}
	return out
}

func countLearned(examples []learnExample) learnCounts {
	tok := routing.NewTokenizer(routing.TokenizerOptions{})
	c := learnCounts{toolWords: map[string]map[string]bool{}, wordTools: map[string]map[string]bool{}, df: map[string]int{}}
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

// targets returns the tool words w points to, best first.
func (c learnCounts) targets(w string, tools map[string]bool, opts learnOptions) []string {
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
	slices.SortFunc(keep, func(a, b scored) int { return cmp.Or(cmp.Compare(b.s, a.s), strings.Compare(a.v, b.v)) })
	var out []string
	for _, k := range keep[:min(len(keep), opts.PerWord)] {
		out = append(out, k.v)
	}
	return out
}

// learnExamplesOf pairs each request of queries with its gold tools, found in
// tools by name (a name tools lacks is skipped).
func learnExamplesOf(tools []routing.Tool, queries []string, gold [][]string) []learnExample {
	byName := make(map[string]routing.Tool, len(tools))
	for _, t := range tools {
		byName[t.Name] = t
	}
	out := make([]learnExample, 0, len(queries))
	for i, q := range queries {
		ex := learnExample{Query: q}
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
