// Package printable makes text from outside (an upstream's tool names,
// descriptions and errors, a client's name) safe to print in a human view:
// a terminal line, a table cell, an HTML page. It sits at the last step
// before text leaves the process for a person, in the CLI (audit, status,
// doctor, pins, auth) and the console.
package printable

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Line returns s with every control character (C0, DEL, C1: ANSI escapes,
// carriage returns, newlines, tabs), every bidirectional-text control and
// the Unicode line and paragraph separators written as Go escapes (\n,
// \x1b, \u202e), so that s prints as one line that cannot move the cursor,
// recolour a terminal or reorder what follows it. Invalid UTF-8 bytes are
// written as \xNN. Other text, including a backslash, is kept as is.
func Line(s string) string {
	if clean(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case escaped(r):
			b.WriteString(escape(r))
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// Lines is Line for each line of s: newlines are kept (a multi-line
// description or contract prints as lines), every other control is
// escaped.
func Lines(s string) string {
	parts := strings.Split(s, "\n")
	for i, p := range parts {
		parts[i] = Line(p)
	}
	return strings.Join(parts, "\n")
}

func clean(s string) bool {
	for _, r := range s {
		if r == utf8.RuneError || escaped(r) {
			return false
		}
	}
	return true
}

// escaped reports whether r is written as an escape.
func escaped(r rune) bool {
	switch {
	case unicode.IsControl(r):
		return true
	case r == '\u2028' || r == '\u2029': // line and paragraph separators
		return true
	case r == '\u061c' || r == '\u200e' || r == '\u200f': // bidi marks
		return true
	case r >= '\u202a' && r <= '\u202e', r >= '\u2066' && r <= '\u2069': // bidi embeddings, overrides, isolates
		return true
	}
	return false
}

func escape(r rune) string {
	switch r {
	case '\n':
		return `\n`
	case '\r':
		return `\r`
	case '\t':
		return `\t`
	}
	if r < 0x100 {
		return fmt.Sprintf(`\x%02x`, r)
	}
	return fmt.Sprintf(`\u%04x`, r)
}
