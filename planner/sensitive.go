package planner

import (
	"slices"
	"strings"
	"unicode"
)

// DefaultSensitiveTopics are the default sensitive keywords: requests that
// a person should answer.
var DefaultSensitiveTopics = []string{"refund", "legal", "complaint", "sue", "compensation"}

// topics matches the sensitive topics case-insensitively on whole words
// ("sue" matches "Sue them", not "issue").
type topics struct {
	names  []string   // as configured, for the escalation reason
	phrase [][]string // each name's words, lower-cased
}

func newTopics(names []string) topics {
	var t topics
	for _, n := range names {
		if w := words(n); len(w) > 0 {
			t.names = append(t.names, strings.TrimSpace(n))
			t.phrase = append(t.phrase, w)
		}
	}
	return t
}

// match returns the first topic found in text, or "".
func (t topics) match(text string) string {
	w := words(text)
	for i, p := range t.phrase {
		for j := 0; j+len(p) <= len(w); j++ {
			if slices.Equal(w[j:j+len(p)], p) {
				return t.names[i]
			}
		}
	}
	return ""
}

// words splits s into lower-cased runs of letters and digits.
func words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}

func hasText(s string) bool { return strings.TrimSpace(s) != "" }
