package integrity

import (
	"maps"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"sync"
)

// descriptionOnly are the starts of hiddenInstruction's markers that are
// ordinary in documents and web pages; results are not checked for them.
var descriptionOnly = []string{"<!--", "you "}

// resultMarker is hiddenInstruction made fast for long texts, built on first use.
var resultMarker = sync.OnceValue(func() *anchoredMarker {
	return newAnchoredMarker(hiddenInstruction.re, descriptionOnly)
})

// anchoredMarker tries a marker's alternatives, anchored, only where the
// text starts with a literal that every match of them starts with
// ("do not tell", "<important"), so most bytes cost a table lookup rather
// than a step of the whole automaton.
type anchoredMarker struct {
	trie     trie
	anywhere *regexp.Regexp
	skip     []string
}

// trie holds the literal starts; node 0 is the root.
type trie struct {
	nodes []trieNode
	root  [256]int32 // the root's children by byte; 0: none
	// wordOnly[b]: every literal starting with b starts a word, so b in
	// the middle of a word starts nothing.
	wordOnly [256]bool
}

type trieNode struct {
	next []trieEdge // few; searched in order
	ends []trieEnd  // the literals that end here
}

type trieEdge struct {
	b    byte
	node int32
}

// trieEnd is a literal that a match of re begins with.
type trieEnd struct {
	re   *regexp.Regexp // ^(?:the alternatives that can begin with the literal)
	word bool           // the alternatives begin with \b and the literal with a word character
}

func (t *trie) child(n int32, b byte) int32 {
	if n == 0 {
		return t.root[b]
	}
	for _, e := range t.nodes[n].next {
		if e.b == b {
			return e.node
		}
	}
	return 0
}

func (t *trie) insert(lit string, end trieEnd) {
	if t.nodes == nil {
		t.nodes = make([]trieNode, 1)
	}
	if t.root[lit[0]] == 0 {
		t.wordOnly[lit[0]] = true
	}
	t.wordOnly[lit[0]] = t.wordOnly[lit[0]] && end.word
	var n int32
	for i := 0; i < len(lit); i++ {
		c := t.child(n, lit[i])
		if c == 0 {
			c = int32(len(t.nodes))
			t.nodes = append(t.nodes, trieNode{})
			if n == 0 {
				t.root[lit[i]] = c
			} else {
				t.nodes[n].next = append(t.nodes[n].next, trieEdge{lit[i], c})
			}
		}
		n = c
	}
	if !slices.Contains(t.nodes[n].ends, end) {
		t.nodes[n].ends = append(t.nodes[n].ends, end)
	}
}

// maxLiterals bounds the literal starts derived from one alternative.
const maxLiterals = 64

func newAnchoredMarker(re *regexp.Regexp, skip []string) *anchoredMarker {
	m := &anchoredMarker{skip: skip}
	parsed, err := syntax.Parse(re.String(), syntax.Perl)
	if err != nil {
		m.anywhere = anchored(re.String())
		return m
	}
	branches := []*syntax.Regexp{parsed}
	if parsed.Op == syntax.OpAlternate {
		branches = parsed.Sub
	}
	type key struct {
		lit  string
		word bool
	}
	byLit := map[key][]string{} // a literal start → its alternatives' source
	var anywhere []string
	for _, b := range branches {
		src := b.String() // not cheap: once per alternative
		lits, ok := prefixSet(b)
		switch {
		case !ok:
			anywhere = append(anywhere, src)
		case !allHavePrefix(lits, skip):
			word := startsWithWordBoundary(b)
			for _, l := range lits {
				k := key{l, wordChar[l[0]] && word}
				byLit[k] = append(byLit[k], src)
			}
		}
	}
	if anywhere != nil {
		m.anywhere = anchored(strings.Join(anywhere, "|"))
	}
	compiled := map[string]*regexp.Regexp{}
	keys := slices.SortedFunc(maps.Keys(byLit), func(a, b key) int { return strings.Compare(a.lit, b.lit) })
	for _, k := range keys {
		src := strings.Join(byLit[k], "|")
		if compiled[src] == nil {
			compiled[src] = anchored(src)
		}
		m.trie.insert(k.lit, trieEnd{re: compiled[src], word: k.word})
	}
	return m
}

func anchored(src string) *regexp.Regexp { return regexp.MustCompile(`^(?:` + src + `)`) }

// startsWithWordBoundary reports whether every match of re begins at \b.
func startsWithWordBoundary(re *syntax.Regexp) bool {
	for re.Op == syntax.OpCapture || re.Op == syntax.OpConcat && len(re.Sub) > 0 {
		if re.Op == syntax.OpConcat && re.Sub[0].Op == syntax.OpWordBoundary {
			return true
		}
		re = re.Sub[0]
	}
	return re.Op == syntax.OpWordBoundary
}

func allHavePrefix(lits, prefixes []string) bool {
	return len(lits) > 0 && !slices.ContainsFunc(lits, func(l string) bool { return !hasPrefix(l, prefixes) })
}

// in reports whether the marker matches in phrase, but for skip's starts.
func (m *anchoredMarker) in(phrase string) bool {
	t := &m.trie
	for p := 0; p < len(phrase); p++ {
		if m.anywhere == nil {
			c := phrase[p]
			n := t.root[c]
			switch {
			case n == 0, t.wordOnly[c] && p > 0 && wordChar[phrase[p-1]]:
				continue
			case len(t.nodes[n].ends) == 0 && (p+1 == len(phrase) || t.child(n, phrase[p+1]) == 0):
				continue // the common case: the first byte fits, the second does not
			}
		}
		if m.matchAt(phrase, p) {
			return true
		}
	}
	return false
}

// matchAt reports whether a match starts at p.
func (m *anchoredMarker) matchAt(phrase string, p int) bool {
	rest := phrase[p:]
	midWord := p > 0 && wordChar[phrase[p]] && wordChar[phrase[p-1]]
	var tried *regexp.Regexp
	for i, n := 0, int32(0); i < len(rest); i++ {
		if n = m.trie.child(n, rest[i]); n == 0 {
			break
		}
		for _, e := range m.trie.nodes[n].ends {
			if e.word && midWord || e.re == tried || hasPrefix(rest, m.skip) {
				continue
			}
			if e.re.MatchString(rest) {
				return true
			}
			tried = e.re
		}
	}
	return m.anywhere != nil && !hasPrefix(rest, m.skip) && m.anywhere.MatchString(rest)
}

func hasPrefix(s string, prefixes []string) bool {
	return slices.ContainsFunc(prefixes, func(p string) bool { return strings.HasPrefix(s, p) })
}

// prefixSet returns literals, at most maxLiterals, one of which every
// match of re starts with; false when there are none such.
func prefixSet(re *syntax.Regexp) ([]string, bool) {
	if s, ok := exactSet(re); ok {
		return s, !slices.Contains(s, "")
	}
	switch re.Op {
	case syntax.OpCapture, syntax.OpPlus:
		return prefixSet(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return prefixSet(re.Sub[0])
		}
	case syntax.OpAlternate:
		var out []string
		for _, sub := range re.Sub {
			s, ok := prefixSet(sub)
			if !ok {
				return nil, false
			}
			out = append(out, s...)
		}
		return dedupe(out), len(out) <= 4*maxLiterals
	case syntax.OpConcat:
		acc := []string{""}
		for _, sub := range re.Sub {
			s, ok := exactSet(sub)
			if !ok {
				if s, ok = prefixSet(sub); ok {
					if next := product(acc, s); len(next) <= maxLiterals {
						acc = next
					}
				}
				break
			}
			next := product(acc, s)
			if len(next) > maxLiterals {
				break
			}
			acc = next
		}
		return acc, !slices.Contains(acc, "")
	}
	return nil, false
}

// exactSet returns every string re matches, when there are at most
// maxLiterals (word boundaries taken as empty: a superset).
func exactSet(re *syntax.Regexp) ([]string, bool) {
	switch re.Op {
	case syntax.OpEmptyMatch, syntax.OpWordBoundary, syntax.OpNoWordBoundary,
		syntax.OpBeginText, syntax.OpBeginLine, syntax.OpEndText, syntax.OpEndLine:
		return []string{""}, true
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase != 0 {
			return nil, false
		}
		return []string{string(re.Rune)}, true
	case syntax.OpCharClass:
		var out []string
		for k := 0; k+1 < len(re.Rune); k += 2 {
			for r := re.Rune[k]; r <= re.Rune[k+1]; r++ {
				if out = append(out, string(r)); len(out) > 8 {
					return nil, false
				}
			}
		}
		return out, len(out) > 0
	case syntax.OpCapture:
		return exactSet(re.Sub[0])
	case syntax.OpQuest:
		s, ok := exactSet(re.Sub[0])
		return dedupe(append(s, "")), ok
	case syntax.OpAlternate:
		var out []string
		for _, sub := range re.Sub {
			s, ok := exactSet(sub)
			if !ok {
				return nil, false
			}
			out = append(out, s...)
		}
		out = dedupe(out)
		return out, len(out) <= maxLiterals
	case syntax.OpConcat:
		acc := []string{""}
		for _, sub := range re.Sub {
			s, ok := exactSet(sub)
			if !ok {
				return nil, false
			}
			if acc = product(acc, s); len(acc) > maxLiterals {
				return nil, false
			}
		}
		return acc, true
	}
	return nil, false
}

func product(a, b []string) []string {
	out := make([]string, 0, len(a)*len(b))
	for _, x := range a {
		for _, y := range b {
			out = append(out, x+y)
		}
	}
	return dedupe(out)
}

func dedupe(s []string) []string {
	slices.Sort(s)
	return slices.Compact(s)
}
