// Package clip bounds text that the gateway writes for a model or a person
// (descriptions, hints, error messages): cut on a rune boundary, so that
// the result stays valid UTF-8, and folded onto one line.
package clip

import (
	"strings"
	"unicode/utf8"
)

// Mark ends text that [Ellipsis] cut.
const Mark = "…"

// Prefix returns the longest start of s that holds at most n bytes and
// ends on a rune boundary.
func Prefix(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// Ellipsis returns s when it fits in n bytes; otherwise the start of s
// followed by [Mark], together at most n bytes.
func Ellipsis(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return Prefix(s, max(n-len(Mark), 0)) + Mark
}

// OneLine folds every run of white space in s, newlines included, into
// one space and trims both ends.
func OneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
