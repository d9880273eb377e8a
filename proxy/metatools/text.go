package metatools

import "unicode/utf8"

// truncateUTF8 cuts s to at most n bytes on a rune boundary, marking a cut
// with "…".
func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
