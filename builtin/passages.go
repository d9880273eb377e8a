package builtin

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// passageChars is the size paragraphs are grouped up to; a longer paragraph is cut at spaces.
const passageChars = 800

type passage struct {
	path    string // relative to the root, slash-separated
	heading string // the heading path, e.g. "Install > From source"
	line    int    // 1-based line where the passage starts
	text    string
}

type format int

const (
	plainText    format = iota // no headings
	markdown                   // "# Heading", setext underlines, fenced code
	restructured               // reStructuredText underlined (and overlined) titles
)

// splitPassages cuts content into passages: a heading ends one, and within a section, paragraphs
// are grouped up to about passageChars characters. Each passage keeps its heading path.
func splitPassages(path, content string, f format) []passage {
	s := splitter{path: path, format: f}
	lines := strings.Split(strings.ReplaceAll(content, "\r\n", "\n"), "\n")
	start := 0
	if f == markdown {
		start = frontMatterEnd(lines)
	}
	for i := start; i < len(lines); i++ {
		s.line(strings.TrimRightFunc(lines[i], unicode.IsSpace), i+1)
	}
	s.endParagraph()
	s.endPassage()
	return s.out
}

// frontMatterEnd is the index of the first line after a leading YAML front-matter block, or 0.
func frontMatterEnd(lines []string) int {
	if len(lines) == 0 || strings.TrimSpace(lines[0]) != "---" {
		return 0
	}
	for i := 1; i < len(lines); i++ {
		if t := strings.TrimSpace(lines[i]); t == "---" || t == "..." {
			return i + 1
		}
	}
	return 0
}

type splitter struct {
	path     string
	format   format
	headings []string // the current title at each level, index 0 for level 1
	adorns   []rune   // reStructuredText underline characters in order of first use: their levels
	fence    string   // the open Markdown code fence ("```" or "~~~"), or ""
	para     []string // lines of the paragraph being read
	paraLine int      // line number of para[0]
	chunk    []string // paragraphs of the passage being grouped
	size     int      // characters in chunk, separators included
	first    int      // line number of chunk[0]
	out      []passage
}

func (s *splitter) line(l string, n int) {
	switch {
	case s.fence != "" || (s.format == markdown && fenceMarker(l) != ""):
		s.codeLine(l, n)
	case s.format == markdown && atxLevel(l) > 0:
		s.heading(atxLevel(l), atxText(l))
	case s.format == markdown && len(s.para) > 0 && setextLevel(l) > 0:
		s.heading(setextLevel(l), strings.Join(s.takePara(), " "))
	case s.format == restructured && isAdornment(l):
		s.adornment(l)
	case strings.TrimSpace(l) == "" || (s.format == markdown && isThematicBreak(l)):
		s.endParagraph()
	default:
		s.addLine(l, n)
	}
}

// codeLine keeps a fenced code block, blank lines included, in one paragraph.
func (s *splitter) codeLine(l string, n int) {
	m := fenceMarker(l)
	switch {
	case s.fence == "":
		s.endParagraph()
		s.fence = m
	case m == s.fence && strings.Trim(strings.TrimSpace(l), m[:1]) == "":
		s.fence = ""
		s.addLine(l, n)
		s.endParagraph()
		return
	}
	s.addLine(l, n)
}

func (s *splitter) addLine(l string, n int) {
	if len(s.para) == 0 {
		s.paraLine = n
	}
	s.para = append(s.para, l)
}

func (s *splitter) takePara() []string {
	p := s.para
	s.para = nil
	return p
}

// heading ends the current passage and sets the title at level, forgetting deeper ones.
func (s *splitter) heading(level int, text string) {
	s.endParagraph()
	s.endPassage()
	for len(s.headings) < level {
		s.headings = append(s.headings, "")
	}
	s.headings = append(s.headings[:level-1], strings.TrimSpace(text))
}

// adornment handles a reStructuredText punctuation line: under a one-line paragraph it makes that
// line a title; elsewhere (an overline, a transition) it separates paragraphs.
func (s *splitter) adornment(l string) {
	if len(s.para) != 1 {
		s.endParagraph()
		return
	}
	c, _ := utf8.DecodeRuneInString(strings.TrimSpace(l))
	level := slices.Index(s.adorns, c) + 1
	if level == 0 {
		s.adorns = append(s.adorns, c)
		level = len(s.adorns)
	}
	s.heading(level, s.takePara()[0])
}

// endParagraph adds the paragraph being read to the passage being grouped.
func (s *splitter) endParagraph() {
	if len(s.para) == 0 {
		return
	}
	line := s.paraLine
	for _, piece := range cut(strings.Join(s.takePara(), "\n"), passageChars) {
		if len(s.chunk) > 0 && s.size+2+len(piece) > passageChars {
			s.endPassage()
		}
		if len(s.chunk) == 0 {
			s.first, s.size = line, -2
		}
		s.chunk = append(s.chunk, piece)
		s.size += 2 + len(piece)
	}
}

func (s *splitter) endPassage() {
	if len(s.chunk) == 0 {
		return
	}
	s.out = append(s.out, passage{
		path: s.path, heading: s.headingPath(), line: s.first, text: strings.Join(s.chunk, "\n\n"),
	})
	s.chunk, s.size = nil, 0
}

func (s *splitter) headingPath() string {
	return strings.Join(slices.DeleteFunc(slices.Clone(s.headings), func(h string) bool { return h == "" }), " > ")
}

// cut splits text into pieces of at most about limit bytes, at whitespace where it can.
func cut(text string, limit int) []string {
	var pieces []string
	for len(text) > limit {
		i := strings.LastIndexFunc(text[:limit], unicode.IsSpace)
		if i <= 0 {
			i = limit
			for i > 0 && !utf8.RuneStart(text[i]) {
				i--
			}
		}
		pieces = append(pieces, strings.TrimRightFunc(text[:i], unicode.IsSpace))
		text = strings.TrimLeftFunc(text[i:], unicode.IsSpace)
	}
	if text != "" {
		pieces = append(pieces, text)
	}
	return pieces
}

// atxLevel is the level of a Markdown "# Heading" line (at most 3 spaces of indent), or 0.
func atxLevel(l string) int {
	t := strings.TrimLeft(l, " ")
	if len(l)-len(t) > 3 {
		return 0
	}
	n := len(t) - len(strings.TrimLeft(t, "#"))
	if n < 1 || n > 6 || (len(t) > n && t[n] != ' ' && t[n] != '\t') {
		return 0
	}
	return n
}

// atxText is the title of an ATX heading line, without its closing hashes.
func atxText(l string) string {
	t := strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(l), "#"))
	if trimmed := strings.TrimRight(t, "#"); trimmed == "" || strings.HasSuffix(trimmed, " ") {
		t = trimmed
	}
	return strings.TrimSpace(t)
}

// setextLevel is 1 for a "==" underline, 2 for "--", else 0.
func setextLevel(l string) int {
	t := strings.TrimSpace(l)
	switch {
	case len(t) < 2:
		return 0
	case strings.Trim(t, "=") == "":
		return 1
	case strings.Trim(t, "-") == "":
		return 2
	}
	return 0
}

// isThematicBreak reports a Markdown rule such as "***", "- - -" or "___".
func isThematicBreak(l string) bool {
	t := strings.ReplaceAll(strings.TrimSpace(l), " ", "")
	return len(t) >= 3 && (strings.Trim(t, "*") == "" || strings.Trim(t, "-") == "" || strings.Trim(t, "_") == "")
}

// fenceMarker is "```" or "~~~" when l opens or closes a Markdown code fence, else "".
func fenceMarker(l string) string {
	t := strings.TrimLeft(l, " ")
	for _, m := range []string{"```", "~~~"} {
		if strings.HasPrefix(t, m) && len(l)-len(t) <= 3 {
			return m
		}
	}
	return ""
}

// isAdornment reports a reStructuredText section line: one punctuation character, 3 times or more.
func isAdornment(l string) bool {
	t := strings.TrimSpace(l)
	if utf8.RuneCountInString(t) < 3 {
		return false
	}
	c, _ := utf8.DecodeRuneInString(t)
	return strings.ContainsRune(`=-~^"'*+#:._`+"`", c) && strings.Trim(t, string(c)) == ""
}
