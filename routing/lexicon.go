package routing

import (
	_ "embed"
	"slices"
	"strings"
	"sync"

	"github.com/kljensen/snowball/english"
)

// stopWords are English function words (Snowball's list plus a few modal
// verbs and abbreviations): they say nothing about which tool fits.
var stopWords = setOf(`a about above after again against all am an and any are as at be
because been before being below between both but by can could did do does doing don down
during each etc few for from further had has have having he her here hers herself him
himself his how i if in into is it its itself just me more most my myself no nor not now of
off on once only or other our ours ourselves out over own s same she should so some such t
than that the their theirs them themselves then there these they this those through to too
under until up very was we were what when where which while who whom why will with would
you your yours yourself yourselves eg ie via might must shall may`)

// fillerWords phrase a request without naming its subject ("can you
// please help me"); dropped from queries only (rare in descriptions, they
// would get a high IDF).
var fillerWords = setOf(`please want wanna need needs like tell let know help hi hello hey
thanks thank also additionally moreover furthermore kindly able possible something anything
someone somebody wondering wonder sure okay ok us im ive id interesting bored hopefully
really actually maybe perhaps basically quite anyway`)

func setOf(words string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}

// tableLines returns the lines of an embedded table, without blank lines
// and # comments.
func tableLines(table string) []string {
	var out []string
	for line := range strings.Lines(table) {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			out = append(out, line)
		}
	}
	return out
}

// synonymTable is a small general lexicon of words that name the same
// action or thing, one group a line; a word that commonly means two
// different things (book, post, log) is left out.
//
//go:embed synonyms.txt
var synonymTable string

// synonymGroups are the lines of synonymTable.
var synonymGroups = tableLines(synonymTable)

// synonymIndex maps a stem to the other stems of its lexicon groups.
var synonymIndex = sync.OnceValue(func() map[string][]string {
	m := map[string][]string{}
	for _, g := range synonymGroups {
		stems := groupStems(g)
		for _, s := range stems {
			for _, o := range stems {
				link(m, s, o)
			}
		}
	}
	return m
})

// synonymsOf returns the stems that share a lexicon group with stem.
func synonymsOf(stem string) []string { return synonymIndex()[stem] }

// link adds b to a's related terms in m, once; a term is not its own.
func link(m map[string][]string, a, b string) {
	if a != b && !slices.Contains(m[a], b) {
		m[a] = append(m[a], b)
	}
}

func groupStems(group string) []string {
	var stems []string
	for _, w := range strings.Fields(group) {
		if s := english.Stem(w, true); !slices.Contains(stems, s) {
			stems = append(stems, s)
		}
	}
	return stems
}
