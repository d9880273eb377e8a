package routing

import (
	"slices"
	"strings"
	"unicode"
)

// Advice: a request for know-how or an errand in the world ("how do I get
// a stain out of my carpet") about things the catalog has never heard of
// is one no tool serves, though a software catalog matches it by a word
// or two of no consequence. Two things together tell it apart: its form
// (asksAdvice; English only) and at least adviceForeign English nouns the
// catalog does not know (carpet, stain). The router abstains when, in
// addition, no top tool matches RouterOptions.AbstainAdvice of it (by
// default all of it), the best-scored tool matches fewer than
// adviceMatched of its words and is not named for a thing the request
// names (named.go), so that a tool doing what is asked is never refused
// for the wording. Figures: docs/routing.md.
const adviceForeign, adviceMatched = 2, 4

// adviceForms are the phrasings of a request for know-how, an opinion or
// an errand, anywhere in it: each space-separated slot is one word, any of
// its |-separated spellings, optional when it ends in ?; a slot starting
// with ... is a word anywhere after the rest. Words are lower-cased and
// split at anything but letters and digits ("what's" is "what s").
var adviceForms = compileForms(
	// know-how: how do I, how to, how often
	"how do|does|can|could|should|would i|we|you|one",
	"how to",
	"how often",
	// the best or the right way, the steps, the signs, the requirements
	"what s|is|are the|some? best|right|proper|perfect|ideal|process|step|steps|sign|signs|difference|differences|requirement|requirements",
	"what s|is|are the|some? specific steps|requirements|regulations",
	"what should i",
	"is it safe|okay|ok|normal|advisable|wise",
	// a recommendation or advice
	"can|could|would you please? recommend|suggest|advise",
	"help me choose|pick|decide|understand",
	"help me figure out",
	"give|provide me with? some? a? tips|advice|ideas|guide|step|instructions",
	"give|provide some? instructions",
	// an errand: go to the store, stop by the bank, pick up my dry cleaning from ...
	"go|come|run|swing|stop|drop by|to|off|over the|my|a|your",
	"pick up? my|some|the ...from|at",
)

// formSlot is one word of an advice form.
type formSlot struct {
	words map[string]bool
	opt   bool // the word may be left out
	later bool // the word may stand anywhere after the slots before it
}

// adviceIndex holds the advice forms by the words their first slot
// (never optional) takes, so that a request's word is looked up once.
type adviceIndex map[string][][]formSlot

func compileForms(forms ...string) adviceIndex {
	out := adviceIndex{}
	for _, f := range forms {
		var form []formSlot
		for _, w := range strings.Fields(f) {
			var sl formSlot
			w, sl.later = strings.CutPrefix(w, "...")
			w, sl.opt = strings.CutSuffix(w, "?")
			sl.words = setOf(strings.ReplaceAll(w, "|", " "))
			form = append(form, sl)
		}
		for w := range form[0].words {
			out[w] = append(out[w], form[1:])
		}
	}
	return out
}

// asksAdvice reports whether query is put as a request for know-how, an
// opinion or an errand (see adviceForms).
func asksAdvice(query string) bool {
	words := strings.FieldsFunc(strings.ToLower(query), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	for i, w := range words {
		for _, rest := range adviceForms[w] {
			if matchForm(rest, words[i+1:]) {
				return true
			}
		}
	}
	return false
}

// matchForm reports whether words begin with form.
func matchForm(form []formSlot, words []string) bool {
	if len(form) == 0 {
		return true
	}
	sl := form[0]
	if sl.later {
		return slices.ContainsFunc(words, func(w string) bool { return sl.words[w] })
	}
	return len(words) > 0 && sl.words[words[0]] && matchForm(form[1:], words[1:]) || sl.opt && matchForm(form[1:], words)
}

// foreignNoun reports whether a word the catalog does not know is an
// English noun (used as one at least half the time, by the WordNet
// table) of three letters or more.
func foreignNoun(stem string, rel wordRelations) bool {
	return len(stem) >= 3 && rel.english && rel.notNoun <= 5
}
