package routing

import (
	_ "embed"
	"slices"
	"strings"
	"sync"

	"github.com/kljensen/snowball/english"
)

// translationTable's lines name one thing in English and in the scripts
// written without spaces (Chinese, Japanese, Korean), so that a request in
// one language finds a tool described in another: English words, a colon,
// and two-character words (one bigram term each; a longer word by its
// telling bigram, 据库 for 数据库). A translation is looked up only when
// the catalog does not know the request's own word.
//
//go:embed translations.txt
var translationTable string

// translationGroups are the lines of translationTable.
var translationGroups = tableLines(translationTable)

// translationWeight is a translation's weight relative to the word.
const translationWeight = 0.8

var (
	translationOnce  sync.Once
	translationIndex map[string][]string
)

// translationsOf returns the terms that translate term (an English stem
// or a two-character word of a script without spaces).
func translationsOf(term string) []string {
	translationOnce.Do(buildTranslations)
	return translationIndex[term]
}

func buildTranslations() {
	translationIndex = map[string][]string{}
	link := func(a, b string) {
		if a != b && !slices.Contains(translationIndex[a], b) {
			translationIndex[a] = append(translationIndex[a], b)
		}
	}
	for _, g := range translationGroups {
		en, rest, _ := strings.Cut(g, ":")
		words := strings.Fields(rest)
		for _, e := range strings.Fields(en) {
			e = english.Stem(e, true)
			for _, w := range words {
				link(e, w)
				link(w, e)
			}
		}
		for _, a := range words {
			for _, b := range words {
				link(a, b)
			}
		}
	}
}
