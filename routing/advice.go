package routing

import "regexp"

// Advice: a request for know-how or for an errand in the world, about
// things the catalog has never heard of, is one no tool serves. People
// ask an assistant "how do I get a stain out of my carpet", "what's the
// best laptop for a student", "can you go to the bank and deposit this
// check"; a catalog of software tools matches such a request by a word
// or two of no consequence ("remove" in a workflow tool, "room" in a
// chat tool, "check" in a version checker), often at a coverage that a
// request some tool serves also has. Two things together tell them
// apart, neither of them alone:
//
//   - the request's form: it asks how to do something, what is best,
//     for a recommendation or an errand (asksAdvice). Catalog-free, and
//     English only;
//   - its things: at least adviceForeign of its words are English nouns
//     (used as a noun at least half the time, by the WordNet table) that
//     the catalog knows neither directly nor through a synonym: "carpet",
//     "stain", "oven". A request that some tool serves names what the
//     tool acts on, in words its description uses.
//
// The router abstains on such a request when, in addition, no top tool
// matches RouterOptions.AbstainAdvice of it (0.5 by default), so that a
// tool doing most of what is asked is never refused for the request's
// wording ("how can I check the price of Ethereum" with a price tool).
//
// Measured on the shared routing benchmark (routing/eval,
// TestBenchAbstention), at the default coverage and commitment: on
// requests that no tool of a catalog of 491 real MCP servers serves,
// abstention rises from 0.308 to 0.484; on that catalog's answerable
// requests it stays at 0.004, on bfcl at 0.019 and on seal_tools at 0;
// on people's requests to chat plugins it rises from 0.036 to 0.056 (of
// which the gold tool was in the top five: 0.014 to 0.028), and from
// 0.075 to 0.079 among the 2,375 real MCP tools. Either half alone buys
// its gain dearer on people's requests: the request's form with coverage
// under 0.4 costs about twice as much there for each request gained, the
// unknown nouns with coverage under 0.5 about seven times.
const adviceForeign = 2

// adviceForms are the phrasings of a request for know-how, an opinion or
// an errand, anywhere in the request (people often put a sentence of
// context first). They are English: a request in another language is
// never taken for one.
var adviceForms = regexp.MustCompile(`(?i)\b(?:` +
	// know-how: how do I, how to, how often
	`how\s+(?:do|does|can|could|should|would)\s+(?:i|we|you|one)\b|how\s+to\b|how\s+often\b|` +
	// the best or the right way, the steps, the signs, the requirements
	`what(?:['’]s|\s+is|\s+are)\s+(?:the\s+|some\s+)?(?:best|right|proper|perfect|ideal|process|steps?|signs?|differences?|requirements?|specific\s+(?:steps|requirements|regulations))\b|` +
	`what\s+should\s+i\b|is\s+it\s+(?:safe|okay|ok|normal|advisable|wise)\b|` +
	// a recommendation or advice
	`(?:can|could|would)\s+you\s+(?:please\s+)?(?:recommend|suggest|advise)\b|` +
	`help\s+me\s+(?:choose|pick|decide|figure\s+out|understand)\b|` +
	`(?:give|provide)\s+me\s+(?:with\s+)?(?:some\s+)?(?:a\s+)?(?:tips|advice|ideas|guide|step-by-step|instructions)\b|` +
	`(?:provide|give)\s+(?:some\s+)?instructions\b|` +
	// an errand: go to the store, stop by the bank, pick up my dry cleaning from
	`(?:go|come|run|swing|stop|drop)\s+(?:by|to|off|over)\s+(?:the|my|a|your)\b|` +
	`pick\s+(?:up\s+)?(?:my|some|the)\b.*\b(?:from|at)\b` +
	`)`)

// asksAdvice reports whether query is put as a request for know-how, an
// opinion or an errand (see adviceForms).
func asksAdvice(query string) bool {
	return adviceForms.MatchString(query)
}

// foreignNoun reports whether a request word the catalog does not know
// (stem, neither directly nor through a synonym) is an English noun in
// the WordNet table: used as a noun at least half the time. Words of
// under three letters (the m of I'm) are left out.
func foreignNoun(stem string) bool {
	if len(stem) < 3 || !isEnglish(stem) {
		return false
	}
	return relationsOf(stem).notNoun <= 5
}
