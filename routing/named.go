package routing

import (
	"cmp"
	"slices"
	"strings"
	"unicode"
)

// A tool named for a thing the request names (weather_forecast for "will
// it rain tomorrow? check the weather") is one the ranking agrees with,
// however the request is put: the commitment and advice checks of
// abstention then stand down. They read only how the scores spread and
// how the request is phrased, and people's requests to chat plugins are
// as often put as advice ("can you recommend a chess opponent"), and
// rank as flat, as requests nothing serves; a noun of the request in the
// top tool's own name tells them apart where neither does. Only nouns
// count: a verb (find, get, play) names what a tool does, and any tool
// that does it to some other thing shares it; and only a noun that heads
// its phrase: in "the stain on my living room carpet" the room tool is
// named for where the carpet is, not for the carpet. Figures:
// docs/routing.md.

// namesNoun tells that a word of t's own name is a head noun of query
// (see headNouns).
func namesNoun(t Tool, query string) bool {
	heads := headNouns(query)
	return slices.ContainsFunc(words.Tokens(cmp.Or(t.Original, t.Name)), func(w string) bool { return slices.Contains(heads, w) })
}

// headNouns returns the stems of the nouns of query that no noun follows
// directly: "room" in "my living room", not in "my living room carpet".
func headNouns(query string) []string {
	var heads []string
	prev := "" // the previous word's stem when a noun, else ""
	for _, w := range strings.FieldsFunc(strings.ToLower(query), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		st := words.Tokens(w) // nothing for a word the tokenizer drops (the, on)
		noun := len(st) == 1 && isNoun(st[0])
		if prev != "" && !noun {
			heads = append(heads, prev)
		}
		prev = ""
		if noun {
			prev = st[0]
		}
	}
	if prev != "" {
		heads = append(heads, prev)
	}
	return heads
}

// isNoun tells that stem is used as a noun at least half the time (by the
// WordNet table), or is a word WordNet does not hold (a product or a
// place), and is no verb of an action (action.go).
func isNoun(stem string) bool {
	if _, verb := actionVerbs[stem]; verb {
		return false
	}
	rel := relationsOf(stem)
	return !rel.english || rel.notNoun <= 5
}
