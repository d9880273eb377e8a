package routing

import (
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// prepared is a request rewritten into the words tool descriptions use,
// its argument values told apart:
//
//   - Operators and their words become the operation ("2 plus 3": add);
//     "what's in X" and "the contents of X" with a file or address: read.
//   - A file name becomes "file" and its extension, an address "url", an
//     e-mail address "email", a path "path": the kind of thing acted on.
//   - Quoted text and capitalised words inside a sentence (Alice) are
//     values: unknown to the catalog, they do not count against a tool's
//     coverage (see calibrate.go).
type prepared struct {
	text   string
	values []string // lower-cased words that are argument values
	stated []string // those of what "remember that ..." asks to keep: content, not ranked
}

// maxPrepared bounds the request text routing reads.
const maxPrepared = 4096

var (
	urlRe   = regexp.MustCompile(`(?i)\b(?:https?|ftp|wss?)://[^\s"'<>)\]]+`)
	emailRe = regexp.MustCompile(`\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b`)
	pathRe  = regexp.MustCompile(`(?:^|\s)((?:~|\.{1,2})?/[\w.-]+(?:/[\w.-]*)+)`)
	// opRe is an arithmetic operator between two numbers (not inside a
	// formula: in 3x^2 + 4x the operands are terms, not numbers).
	opRe = regexp.MustCompile(`(^|[^\w.])(\d+(?:\.\d+)?)\s*([+×*÷^]|\*\*|\s[-−/]\s)\s*(\d+(?:\.\d+)?)($|[^\w.^])`)
)

// fileExtensions are the extensions a request names a file by.
var fileExtensions = setOf(`txt md markdown rst csv tsv json jsonl yaml yml toml xml html htm css js ts
tsx jsx py go rs java kt c cc cpp h hpp cs rb php swift sh sql log ini cfg conf env pdf doc docx xls
xlsx ppt pptx odt rtf epub png jpg jpeg gif svg webp bmp tif tiff mp3 wav flac ogg mp4 mov avi mkv
webm zip tar gz tgz bz2 7z rar ipynb parquet db sqlite`)

// replaceFiles replaces each file name in q (with any directories before
// it) with "file", its extension and its kind of content, and reports
// whether it found one.
func replaceFiles(q string) (string, bool) {
	var b strings.Builder
	last, found := 0, false
	for i := 1; i+1 < len(q); i++ {
		if q[i] != '.' || !isWordByte(q[i-1]) || !isWordByte(q[i+1]) {
			continue
		}
		end := i + 1
		for end < len(q) && isWordByte(q[end]) {
			end++
		}
		ext := asciiLower(q[i+1 : end])
		if !fileExtensions[ext] || end < len(q) && (q[end] == '.' && end+1 < len(q) && isWordByte(q[end+1]) || q[end] == '/') {
			continue
		}
		start := i
		for start > last && !strings.ContainsRune(" \t\n\"'(`[", rune(q[start-1])) {
			start--
		}
		b.WriteString(q[last:start])
		b.WriteString(" file " + ext + " " + fileKinds[ext] + " ")
		last, found = end, true
		i = end
	}
	if !found {
		return q, false
	}
	b.WriteString(q[last:])
	return b.String(), true
}

// fileKinds name the kind of content a file extension holds.
var fileKinds = map[string]string{
	"png": "image", "jpg": "image", "jpeg": "image", "gif": "image", "svg": "image", "webp": "image", "bmp": "image", "tif": "image", "tiff": "image",
	"mp3": "audio", "wav": "audio", "flac": "audio", "ogg": "audio",
	"mp4": "video", "mov": "video", "avi": "video", "mkv": "video", "webm": "video",
	"pdf": "document", "doc": "document", "docx": "document", "odt": "document", "rtf": "document", "epub": "document",
	"xls": "spreadsheet", "xlsx": "spreadsheet", "csv": "spreadsheet", "tsv": "spreadsheet",
	"ppt": "presentation", "pptx": "presentation",
}

// urlWords returns the words of a URL's path (the host and query say
// nothing of what is wanted).
func urlWords(u string) string {
	rest := u[strings.Index(u, "://")+3:]
	i := strings.IndexByte(rest, '/')
	if i < 0 {
		return ""
	}
	path, _, _ := strings.Cut(rest[i:], "?")
	return strings.Join(strings.FieldsFunc(path, func(r rune) bool { return !unicode.IsLetter(r) }), " ")
}

// operators rewrites symbols to the operation they stand for.
var operators = map[string]string{
	"+": " add sum numbers ", "×": " multiply product numbers ", "*": " multiply product numbers ",
	"÷": " divide quotient numbers ", "/": " divide quotient numbers ", "^": " power numbers ",
	"**": " power numbers ", "-": " subtract difference numbers ", "−": " subtract difference numbers ",
}

// phrases rewrite the words people use for an operation into the word
// tool descriptions use, as whole words, longer phrases first. Those
// marked read apply only when the request names a file, path or address.
var phrases = []struct {
	from, to string
	read     bool
}{
	{from: "to the power of", to: "power"},
	{from: "raised to", to: "power"},
	{from: "square root of", to: "square root"},
	{from: "multiplied by", to: "multiply product numbers"},
	{from: "divided by", to: "divide quotient numbers"},
	{from: "subtracted from", to: "subtract"},
	{from: "added to", to: "add"},
	{from: "what's in", to: "read", read: true},
	{from: "whats in", to: "read", read: true},
	{from: "what is in", to: "read", read: true},
	{from: "what's inside", to: "read", read: true},
	{from: "contents of", to: "read contents", read: true},
	{from: "content of", to: "read content", read: true},
	{from: "open", to: "read", read: true},
	{from: "keep in mind", to: "remember"},
	{from: "don't forget", to: "remember"},
}

// wordOpRe is an operation's word between numbers: "6 times 7", not
// "three times a week" or a product called Plus.
var wordOpRe = regexp.MustCompile(`(?i)(\d)\s+(plus|minus|times)\s+(\d)`)

var wordOps = map[string]string{"plus": "add sum numbers", "minus": "subtract difference numbers", "times": "multiply product numbers"}

// percentRe is a share of a number ("15% of 240"): a product.
var percentRe = regexp.MustCompile(`(?i)(\d)\s*(?:%|percent)\s+of\s+(\d)`)

// prepare rewrites a request (see prepared), but for the heuristics off
// turns off.
func prepare(q string, off Heuristics) prepared {
	if len(q) > maxPrepared {
		q = q[:maxPrepared]
		for !utf8.ValidString(q) {
			q = q[:len(q)-1]
		}
	}
	var p prepared
	kinds := 0 // what values said about the thing acted on
	if off&OffValues == 0 {
		q, kinds = p.replaceValues(q)
	}
	if off&OffOperators != 0 {
		p.text = q
		return p
	}
	digits := strings.ContainsAny(q, "0123456789")
	if digits {
		q = rewriteOperators(q)
	}
	if digits && (strings.Contains(q, "plus") || strings.Contains(q, "minus") || strings.Contains(q, "times")) {
		q = wordOpRe.ReplaceAllStringFunc(q, func(m string) string {
			sm := wordOpRe.FindStringSubmatch(m)
			return sm[1] + " " + wordOps[strings.ToLower(sm[2])] + " " + sm[3]
		})
	}
	if digits && strings.Contains(q, " of ") && (strings.Contains(q, "%") || strings.Contains(asciiLower(q), "percent")) {
		q = percentRe.ReplaceAllString(q, "$1 multiply product numbers $2")
	}
	low := asciiLower(q)
	for _, ph := range phrases {
		if ph.read && kinds == 0 || !strings.Contains(low, ph.from) {
			continue
		}
		q = replaceWord(q, ph.from, ph.to)
		low = asciiLower(q)
	}
	p.text = q
	return p
}

// replaceValues replaces addresses, files and paths in q with their
// kind, notes the argument values in p, and returns q and the kinds found.
func (p *prepared) replaceValues(q string) (string, int) {
	kinds := 0
	if strings.Contains(q, "://") {
		q = urlRe.ReplaceAllStringFunc(q, func(u string) string {
			kinds |= kindURL
			p.values = append(p.values, strings.Fields(urlWords(u))...)
			return " url " + urlWords(u) + " "
		})
	}
	if strings.Contains(q, "@") {
		q = emailRe.ReplaceAllString(q, " email ")
	}
	var found bool
	if q, found = replaceFiles(q); found {
		kinds |= kindFile
	}
	if startsPath(q) {
		q = pathRe.ReplaceAllStringFunc(q, func(m string) string {
			kinds |= kindFile
			return m[:len(m)-len(strings.TrimLeftFunc(m, unicode.IsSpace))] + " path " // the space before it stays
		})
	}
	vals, stated := values(q)
	p.values, p.stated = append(append(p.values, vals...), stated...), stated
	return q, kinds
}

// startsPath: a slash first or after a space, ~ or ., as in every match of pathRe (not and/or).
func startsPath(q string) bool {
	return strings.HasPrefix(q, "/") || strings.Contains(q, "/") && slices.ContainsFunc([]string{" /", "\t/", "\n/", "\f/", "\r/", "~/", "./"}, func(s string) bool { return strings.Contains(q, s) })
}

// The kinds of values replaceValues finds.
const kindFile, kindURL = 1, 2

// rewriteOperators turns arithmetic operators between operands into the
// operation's word.
func rewriteOperators(q string) string {
	// "1 + 2 + 3": matches overlap by one operand, so a pass may leave work
	// for the next; a pass runs only where what opRe needs is there.
	for i := 0; i < 4 && betweenDigits(q); i++ {
		r := opRe.ReplaceAllStringFunc(q, func(m string) string {
			sm := opRe.FindStringSubmatch(m)
			return sm[1] + sm[2] + operators[strings.TrimSpace(sm[3])] + sm[4] + sm[5]
		})
		if r == q {
			break
		}
		q = r
	}
	return q
}

// betweenDigits reports whether an operator of opRe stands between two
// digits, spaces aside: a cheap test that every match of opRe passes.
func betweenDigits(q string) bool {
	for i, r := range q {
		if !strings.ContainsRune("+×*÷^-−/", r) || r == '*' && i > 0 && q[i-1] == '*' {
			continue // the second star of ** was read with the first
		}
		before := strings.TrimRight(q[:i], space)
		after := strings.TrimLeft(strings.TrimPrefix(q[i+utf8.RuneLen(r):], "*"), space)
		if before != "" && after != "" && isDigit(before[len(before)-1]) && isDigit(after[0]) {
			return true
		}
	}
	return false
}

// space is the regexp class \s.
const space = "\t\n\f\r "

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// replaceWord replaces each whole-word occurrence of from (lower-case)
// in s, in any ASCII case (so that offsets agree), with to.
func replaceWord(s, from, to string) string {
	low := asciiLower(s)
	i := strings.Index(low, from)
	if i < 0 {
		return s
	}
	var b strings.Builder
	last := 0
	for i >= 0 {
		end := i + len(from)
		if (i == 0 || !isWordByte(low[i-1]) && low[i-1] != '\'') && (end == len(low) || !isWordByte(low[end])) {
			b.WriteString(s[last:i])
			b.WriteString(to)
			last = end
		}
		j := strings.Index(low[end:], from)
		if j < 0 {
			break
		}
		i = end + j
	}
	b.WriteString(s[last:])
	return b.String()
}

// asciiLower lower-cases the ASCII letters of s.
func asciiLower(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; 'A' <= c && c <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if 'A' <= b[j] && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

// values returns the lower-cased words of q that are argument values:
// quoted text, capitalised words not starting a sentence (Alice, not
// PDF) and numbers in words (two, as 2 is); and apart, those of what
// "remember that ..." asks to keep.
func values(q string) (out, said []string) {
	for _, m := range quoted(q, 8) {
		out = append(out, strings.Fields(strings.ToLower(m))...)
	}
	start := true   // at a sentence's start
	stated := false // in what a request says to remember: "remember that ..."
	prev := ""
	for w := range strings.FieldsSeq(q) {
		core := w
		if !isASCIIAlnum(w[0]) || !isASCIIAlnum(w[len(w)-1]) {
			core = strings.TrimFunc(w, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
		}
		switch {
		case stated:
			said = append(said, strings.ToLower(core))
		case core != "" && !start && isCapitalised(core) || inSetFold(numberWords, core):
			out = append(out, strings.ToLower(core))
		case strings.EqualFold(core, "that") && inSetFold(statingVerbs, prev):
			stated = true
		}
		prev = core
		if core != "" {
			start = false
		}
		if strings.IndexByte(".?!:;", w[len(w)-1]) >= 0 {
			start, stated = true, false
		}
	}
	return out, said
}

// numberWords are numbers written as words.
var numberWords = setOf(`two three four five six seven eight nine ten eleven twelve twenty thirty forty fifty hundred thousand million dozen`)

// statingVerbs introduce, with "that", a value to keep.
var statingVerbs = setOf(`remember memorize memorise note record store save`)

// quotePairs are the quotes a request may quote a value with.
var quotePairs = [][2]string{{`"`, `"`}, {"'", "'"}, {"`", "`"}, {"“", "”"}, {"‘", "’"}}

// maxQuoted bounds the length of a quoted value; a longer run is prose.
const maxQuoted = 200

// quoted returns at most limit texts of q between quotes; a single quote
// opens only outside a word (not in don't) and closes only before one.
func quoted(q string, limit int) []string {
	var out []string
	for i := 0; i < len(q) && len(out) < limit; i++ {
		// Every opening quote starts with one of these bytes (“ and ‘: 0xE2).
		if c := q[i]; c != '"' && c != '\'' && c != '`' && c != 0xE2 {
			continue
		}
		for _, p := range quotePairs {
			if !strings.HasPrefix(q[i:], p[0]) || p[0] == "'" && i > 0 && isWordByte(q[i-1]) {
				continue
			}
			start := i + len(p[0])
			rest := q[start:min(len(q), start+maxQuoted+len(p[1]))]
			end := -1
			for off := 0; off < len(rest); {
				k := strings.Index(rest[off:], p[1])
				if k < 0 {
					break
				}
				k += off
				after := k + len(p[1])
				if p[1] != "'" || after >= len(rest) || !isWordByte(rest[after]) {
					end = k
					break
				}
				off = after
			}
			if end > 0 {
				out = append(out, rest[:end])
				i = start + end + len(p[1]) - 1
			}
			break
		}
	}
	return out
}

func isASCIIAlnum(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || isDigit(c) }

// isCapitalised reports whether w is a capital, then lower case only.
func isCapitalised(w string) bool {
	r, n := utf8.DecodeRuneInString(w)
	return unicode.IsUpper(r) && n < len(w) && !strings.ContainsFunc(w[n:], func(r rune) bool { return !unicode.IsLower(r) })
}
