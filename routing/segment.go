package routing

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// segmentWords start a further request inside a sentence ("find X, then
// Y"); splitting at an "and" that joins nouns costs nothing measurable.
var segmentWords = setOf(`and then additionally also finally next afterwards lastly secondly
thirdly furthermore moreover besides subsequently meanwhile`)

// abbreviations end in a full stop that does not end a sentence.
var abbreviations = setOf(`e.g eg i.e ie etc vs mr mrs ms dr st no approx`)

// segments splits a request into the clauses that may each ask for a
// different tool, at sentence ends and before segment words, at most
// limit of them (the last holds the rest); clauses are trimmed, never
// empty.
func segments(q string, limit int) []string {
	var out []string
	start := 0
	// onlySeg: the clause's words so far are all segment words; tok: the
	// start of the word being read (-1: none). Kept as the scan goes, not
	// looked back at (quadratic).
	onlySeg, tok := true, -1
	cut := func(end int) {
		if s := strings.TrimSpace(q[start:end]); s != "" {
			out = append(out, s)
			start, onlySeg, tok = end, true, -1
		}
	}
	for i := 0; i < len(q) && len(out) < limit-1; {
		r, size := utf8.DecodeRuneInString(q[i:])
		next := i + size
		if unicode.IsSpace(r) {
			if tok >= 0 && onlySeg && !isSegmentWord(q[tok:i]) {
				onlySeg = false
			}
			tok = -1
		} else if tok < 0 {
			tok = i
		}
		switch {
		case r == '\n' || r == ';' || r == '。' || r == '？' || r == '！':
			cut(next)
		case r == '.' || r == '?' || r == '!':
			if (next == len(q) || q[next] == ' ' || q[next] == '"') && !endsAbbreviation(q[:i]) {
				cut(next)
			}
		case unicode.IsLetter(r) && (i == 0 || !isWordByte(q[i-1])):
			end := i
			for end < len(q) && isWordByte(q[end]) {
				end++
			}
			before := onlySeg && (tok == i || isSegmentWord(q[tok:i]))
			if isSegmentWord(q[i:end]) && !before {
				cut(i) // "and also" starts one clause, not two
				tok = i
			}
			next = max(end, next)
		}
		i = next
	}
	if s := strings.TrimSpace(q[start:]); s != "" {
		out = append(out, s)
	}
	return out
}

// Clauses returns the clauses the index ranks a prepared request by,
// besides the whole request, at most eight.
func Clauses(q string) []string {
	return segments(prepare(q, 0).text, maxSegments)
}

// isSegmentWord says whether w is a segment word, in any case.
func isSegmentWord(w string) bool { return inSetFold(segmentWords, w) }

// inSetFold says whether w, its ASCII letters lower-cased, is in set; it
// lower-cases into a stack buffer, so longer words are never found.
func inSetFold(set map[string]bool, w string) bool {
	var buf [24]byte
	if len(w) > len(buf) {
		return false
	}
	for i := 0; i < len(w); i++ {
		c := w[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf[i] = c
	}
	return set[string(buf[:len(w)])]
}

// endsAbbreviation reports whether s ends in an abbreviation or a single
// letter (an initial), so that a full stop after it ends no sentence.
func endsAbbreviation(s string) bool {
	i := len(s)
	for i > 0 && (isWordByte(s[i-1]) || s[i-1] == '.') {
		i--
	}
	w := strings.ToLower(strings.TrimPrefix(s[i:], "."))
	return len(w) == 1 || abbreviations[w]
}

func isWordByte(c byte) bool { return isASCIIAlnum(c) || c >= 0x80 }
