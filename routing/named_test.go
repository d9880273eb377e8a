package routing

import (
	"slices"
	"testing"
)

// TestHeadNouns: a noun heads its phrase when no noun follows it
// directly; verbs and dropped words are no nouns.
func TestHeadNouns(t *testing.T) {
	for _, tc := range []struct {
		query     string
		has, lack []string
	}{
		{"How do I get the stain out of my living room carpet?", []string{"stain", "carpet"}, []string{"room", "get"}},
		{"replace the lamp in my living room", []string{"lamp", "room"}, nil},
		{"Can you recommend an opponent for a game of chess?", []string{"opponent", "game", "chess"}, []string{"recommend"}},
	} {
		heads := headNouns(tc.query)
		for _, w := range tc.has {
			if !slices.Contains(heads, words.Tokens(w)[0]) {
				t.Errorf("headNouns(%q) = %v, want %q among them", tc.query, heads, w)
			}
		}
		for _, w := range tc.lack {
			if slices.Contains(heads, words.Tokens(w)[0]) {
				t.Errorf("headNouns(%q) = %v, want no %q", tc.query, heads, w)
			}
		}
	}
}

// TestNamesNoun: a tool is named for a request's thing when its own name
// holds a head noun of it, not a verb or a modifier.
func TestNamesNoun(t *testing.T) {
	for _, tc := range []struct {
		tool, query string
		want        bool
	}{
		{"chess_play", "Can you recommend an opponent for a game of chess?", true},
		{"get_room_details", "How do I get the stain out of my living room carpet?", false},
		{"find_files", "find me a way to stream the game", false}, // a verb only
		{"places_search", "what is the best pizza place in town", true},
	} {
		if got := namesNoun(Tool{Name: tc.tool}, tc.query); got != tc.want {
			t.Errorf("namesNoun(%s, %q) = %v, want %v", tc.tool, tc.query, got, tc.want)
		}
	}
}
