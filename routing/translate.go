package routing

import (
	_ "embed"
	"slices"
	"strings"
	"sync"

	"github.com/kljensen/snowball/english"
)

// translationTable's lines name one thing tools do or act on in English and in
// the scripts written without spaces that real catalogs hold (Chinese,
// simplified and traditional, Japanese and Korean), so that a request in
// one language finds a tool described in another. Each line is English
// words, a colon, and words of two characters: the tokenizer splits those
// scripts into character bigrams, so a two-character word is exactly one
// term. A longer word is listed by its telling bigram (据库 for 数据库,
// database; デー for データ; 용자 for 사용자, user), and a verb by the
// bigram its inflected forms share (読ん, 読み for 読む; 보내 for 보내다).
// The English words of a line translate the others, not each other (the
// lexicon relates English words). A translation is looked up only when
// the catalog does not know the request's own word (as WordNet's
// relations are), and counts as the word in coverage.
//
//go:embed translations.txt
var translationTable string

// translationGroups are the lines of translationTable.
var translationGroups = tableLines(translationTable)

// translationWeight is a translation's weight relative to the word: a
// translation names the same thing, but a table of a few words knows
// neither the senses nor the usage a catalog's own words carry.
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
