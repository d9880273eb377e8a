package routing

import (
	"slices"
	"strings"
)

// dropData removes pasted data from a request, so that a tool result, a
// log or a blob of arguments pasted into it does not steer routing: the
// words inside it (a result's keys, a log's messages) name what some
// tool returned, not what is asked. It drops
//
//   - code blocks between ``` fences (to the end when the closing fence
//     is missing);
//   - JSON: a {...} span that holds a colon and is at least minDataBytes
//     long, and a [...] span holding nothing but JSON values (strings,
//     numbers, true, false, null, objects, arrays; Python's True, False
//     and None too) that holds an object or is at least minDataBytes long.
//     A span cut off by the end of the request counts when it holds `":`,
//     as truncated JSON does. A list of words stays: its items are often
//     what the request is about ("sort [apples, pears]"), and so does a
//     short object of arguments ({"a": 7, "b": 2});
//   - records: runs of key=value or key: value pairs, timestamps, and ids
//     (see recordRuns), and lines that are mostly such data (see
//     dataLines).
//
// When what is left has fewer than three words, the request is the data
// and is kept whole: there is nothing else to go by.
func dropData(q string) string {
	out := q
	if strings.Contains(out, "```") {
		out = dropFences(out)
	}
	if strings.ContainsAny(out, "{[") {
		out = dropJSON(out)
	}
	if strings.ContainsAny(out, "=:") {
		out = dropRecords(out)
	}
	if out == q || len(strings.Fields(out)) < 3 {
		return q
	}
	return out
}

// minDataBytes is the shortest JSON span taken for pasted data; shorter
// ones are arguments written inline.
const minDataBytes = 24

// dropFences removes the code blocks of q between ``` fences.
func dropFences(q string) string {
	var b strings.Builder
	for {
		i := strings.Index(q, "```")
		if i < 0 {
			break
		}
		b.WriteString(q[:i])
		b.WriteByte(' ')
		j := strings.Index(q[i+3:], "```")
		if j < 0 {
			return b.String()
		}
		q = q[i+3+j+3:]
	}
	b.WriteString(q)
	return b.String()
}

// dropJSON removes the JSON spans of q that are pasted data (see
// dropData).
func dropJSON(q string) string {
	var b strings.Builder
	last := 0
	for i := 0; i < len(q); i++ {
		c := q[i]
		if c != '{' && c != '[' {
			continue
		}
		end, closed, ok := matchBracket(q, i)
		if !ok {
			continue
		}
		span := q[i:end]
		data := closed || strings.Contains(span, `":`)
		if c == '{' {
			data = data && len(span) >= minDataBytes && strings.IndexByte(span, ':') >= 0
		} else {
			data = data && (len(span) >= minDataBytes || strings.IndexByte(span, '{') >= 0) && onlyJSONValues(span)
		}
		switch {
		case data:
			b.WriteString(q[last:i])
			b.WriteByte(' ')
			last = end
			i = end - 1
		case c == '{' && closed:
			i = end - 1 // an object of arguments is kept whole
		}
		// A list that is not data may hold an object that is: look inside.
	}
	if last == 0 {
		return q
	}
	b.WriteString(q[last:])
	return b.String()
}

// matchBracket returns the end of the bracketed span opening at q[i]
// (just past its closing bracket, or len(q) when the request ends inside
// it) and whether it was closed. Brackets inside double-quoted strings
// do not count. ok is false when a closing bracket does not match its
// opener: the text is not JSON.
func matchBracket(q string, i int) (end int, closed, ok bool) {
	var stack [16]byte
	depth := 0
	inString := false
	for j := i; j < len(q); j++ {
		c := q[j]
		switch {
		case inString:
			if c == '\\' {
				j++
			} else if c == '"' {
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			if depth == len(stack) {
				return 0, false, false
			}
			stack[depth] = c + 2 // '{'+2 is '}', '['+2 is ']'
			depth++
		case c == '}' || c == ']':
			if stack[depth-1] != c {
				return 0, false, false
			}
			depth--
			if depth == 0 {
				return j + 1, true, true
			}
		}
	}
	return len(q), false, true
}

// onlyJSONValues reports whether span, outside its quoted strings, holds
// no words but JSON's literals (and Python's, whose lists are pasted as
// often).
func onlyJSONValues(span string) bool {
	for i := 0; i < len(span); i++ {
		c := span[i]
		switch {
		case c == '"' || c == '\'':
			j := i + 1
			for j < len(span) && span[j] != c {
				if span[j] == '\\' {
					j++
				}
				j++
			}
			i = j
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80:
			j := i
			for j < len(span) && isWordByte(span[j]) {
				j++
			}
			if !jsonLiterals[span[i:j]] && !isNumberWord(span[i:j]) {
				return false
			}
			i = j - 1
		case c >= '0' && c <= '9':
			j := i
			for j < len(span) && isWordByte(span[j]) {
				j++
			}
			i = j - 1 // 1e5, 0x1f
		}
	}
	return true
}

var jsonLiterals = setOf(`true false null True False None NaN Infinity`)

// isNumberWord reports whether w is the exponent of a number split at
// its sign (the "e" of 1e-5).
func isNumberWord(w string) bool { return w == "e" || w == "E" }

// A token's kind, for telling records from prose.
type tokenKind uint8

const (
	tokenWord   tokenKind = iota
	tokenFiller           // a plain number or punctuation: data, but common in requests ("2 + 3")
	tokenRecord           // key=value, key:, a timestamp, an id: data a person rarely types
)

// minRecordRun is the fewest records a run needs to be dropped.
const minRecordRun = 3

// dropRecords removes from q the runs of records (see recordRuns) and
// the lines that are mostly data (see dataLines).
func dropRecords(q string) string {
	toks := tokens(q)
	cuts := recordRuns(toks, nil)
	if strings.IndexByte(q, '\n') >= 0 {
		cuts = dataLines(q, toks, cuts)
	}
	if len(cuts) == 0 {
		return q
	}
	return cut(q, cuts)
}

type token struct {
	start, end int
	kind       tokenKind
	label      bool // a word and a colon: "result:", "Chain:"
}

// tokens splits q at white space and classifies each piece.
func tokens(q string) []token {
	out := make([]token, 0, len(q)/6)
	for i := 0; i < len(q); {
		if isSpaceByte(q[i]) {
			i++
			continue
		}
		j := i
		for j < len(q) && !isSpaceByte(q[j]) {
			j++
		}
		w := q[i:j]
		label := len(w) > 1 && w[len(w)-1] == ':' && isWordByte(w[len(w)-2]) && strings.IndexByte(w[:len(w)-1], ':') < 0
		out = append(out, token{start: i, end: j, kind: classify(w), label: label})
		i = j
	}
	return out
}

func isOpening(c byte) bool {
	return c == '(' || c == '[' || c == '{' || c == '<' || c == '"' || c == '\''
}

func isClosing(c byte) bool {
	return c == ')' || c == ']' || c == '}' || c == '>' || c == '"' || c == '\''
}

func isSpaceByte(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

// classify says whether w is a word, filler or a record. It looks at
// bytes, not runes: every byte of a multi-byte rune counts as a letter.
func classify(w string) tokenKind {
	i, j := 0, len(w)
	for i < j && isOpening(w[i]) {
		i++
	}
	for j > i && (isClosing(w[j-1]) || w[j-1] == ',' || w[j-1] == '.' || w[j-1] == ';' || w[j-1] == '!' || w[j-1] == '?') {
		j--
	}
	core := w[i:j]
	var letters, digits, signs, dots, commas, equals, colons, ats int
	for k := 0; k < len(core); k++ {
		switch c := core[k]; {
		case c >= '0' && c <= '9':
			digits++
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80:
			letters++
		case c == '+' || c == '-':
			signs++
		case c == '.':
			dots++
		case c == ',':
			commas++
		case c == '=':
			equals++
		case c == ':':
			colons++
		case c == '@':
			ats++
		}
	}
	switch {
	case letters+digits == 0:
		return tokenFiller // punctuation: +, ->, |
	case colons > 0 && strings.Contains(core, "://") || ats > 0 && core[0] != '@':
		return tokenWord // an address: prepare makes it a url or email
	case equals > 0:
		return tokenRecord // key=value, a==b
	case colons > 0:
		// key: (a label before its value), host:port, 12:30:05, "a":"b"
		return tokenRecord
	case dots > 0 && isFileName(core):
		return tokenWord
	}
	if c := core[0]; c >= '0' && c <= '9' || (c == '-' || c == '+') && len(core) > 1 && core[1] >= '0' && core[1] <= '9' {
		plain := digits+signs+dots+commas == len(core)
		if plain && dots <= 1 && !strings.ContainsAny(core[1:], "+-") {
			return tokenFiller // 3, -74.0, 1,000
		}
		return tokenRecord // 12ms, 2024-05-01, 1.2.3, 0x7f
	}
	if len(core) >= 8 && digits > 0 && letters > 0 {
		return tokenRecord // a hash, a uuid, a build id
	}
	return tokenWord
}

// isFileName reports whether w ends in a dot and a known file extension.
func isFileName(w string) bool {
	i := strings.LastIndexByte(w, '.')
	return i > 0 && i+1 < len(w) && fileExtensions[asciiLower(w[i+1:])]
}

// recordRuns appends to cuts the byte ranges of q's runs of data: tokens
// that are records or filler, with at most one word between two of them,
// starting and ending with data and holding at least minRecordRun
// records; a label (a word and a colon) that starts a run stays. "Tool
// output was: sqrt=4 log=2 exp=7 modulo 3" loses everything after
// "was:"; "What is 25 + 37?" and "between 10:00 and
// 12:30" (two records) lose nothing.
func recordRuns(toks []token, cuts [][2]int) [][2]int {
	for i := 0; i < len(toks); {
		if toks[i].kind == tokenWord {
			i++
			continue
		}
		last, records := i, 0
		for j := i; j < len(toks); j++ {
			switch {
			case toks[j].kind != tokenWord:
				last = j
				if toks[j].kind == tokenRecord {
					records++
				}
				continue
			case j+1 < len(toks) && toks[j+1].kind != tokenWord:
				continue // one word between data
			}
			break
		}
		if records >= minRecordRun {
			start := i
			if toks[i].label && i < last {
				start++ // "Chain: 0x45… and 0x67…": the label names what follows
			}
			cuts = append(cuts, [2]int{toks[start].start, toks[last].end})
		}
		i = last + 1
	}
	return cuts
}

// Thresholds of dataLines.
const (
	minDataLineTokens  = 6
	minDataLineRecords = 3
	minDataLineShare   = 0.5
)

// dataLines appends to cuts the lines of q that are mostly data: at
// least minDataLineTokens tokens, minDataLineRecords of them records and
// minDataLineShare of them records or filler, as a line of a log is
// ("12:00:01 INF upstream ready upstream=web tools=2"). A line of prose
// with a number or two is not.
func dataLines(q string, toks []token, cuts [][2]int) [][2]int {
	for i := 0; i < len(toks); {
		lineEnd := strings.IndexByte(q[toks[i].start:], '\n')
		if lineEnd < 0 {
			lineEnd = len(q)
		} else {
			lineEnd += toks[i].start
		}
		j, records, data := i, 0, 0
		for ; j < len(toks) && toks[j].start < lineEnd; j++ {
			switch toks[j].kind {
			case tokenRecord:
				records++
				data++
			case tokenFiller:
				data++
			}
		}
		if n := j - i; n >= minDataLineTokens && records >= minDataLineRecords && float64(data) >= minDataLineShare*float64(n) {
			cuts = append(cuts, [2]int{toks[i].start, toks[j-1].end})
		}
		i = j
	}
	return cuts
}

// cut returns q with each of the byte ranges replaced by a space. The
// ranges may overlap and come in any order.
func cut(q string, cuts [][2]int) string {
	slices.SortFunc(cuts, func(a, b [2]int) int { return a[0] - b[0] })
	var b strings.Builder
	b.Grow(len(q))
	last := 0
	for _, c := range cuts {
		if c[1] <= last {
			continue
		}
		b.WriteString(q[last:max(last, c[0])])
		b.WriteByte(' ')
		last = c[1]
	}
	b.WriteString(q[last:])
	return b.String()
}
