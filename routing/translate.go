package routing

import (
	_ "embed"
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

// translationIndex maps a term to the terms that translate it.
var translationIndex = sync.OnceValue(func() map[string][]string {
	m := map[string][]string{}
	for _, g := range translationGroups {
		en, rest, _ := strings.Cut(g, ":")
		words := strings.Fields(rest)
		for _, e := range strings.Fields(en) {
			e = english.Stem(e, true)
			for _, w := range words {
				link(m, e, w)
				link(m, w, e)
			}
		}
		for _, a := range words {
			for _, b := range words {
				link(m, a, b)
			}
		}
	}
	return m
})

// translationsOf returns the terms that translate term (an English stem
// or a two-character word of a script without spaces).
func translationsOf(term string) []string { return translationIndex()[term] }
