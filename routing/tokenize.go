package routing

import (
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/kljensen/snowball/english"
)

// TokenizerOptions configures a Tokenizer. The zero value is the default:
// stop words dropped, English words stemmed.
type TokenizerOptions struct {
	NoStem bool // turns the Snowball English stemmer off
}

// A Tokenizer turns text into index terms: it lower-cases, splits words
// and identifiers (snake_case, camelCase, ...), drops English stop words
// and pure numbers, stems English words, and emits character bigrams for
// scripts written without spaces. It is safe for concurrent use.
type Tokenizer struct {
	opts  TokenizerOptions
	query bool // drop query filler words too
	// memo, when set (the query tokenizer's), keeps each word's term and,
	// with expand, its expansions: requests repeat their words.
	memo   *termMemo
	expand bool
}

// termMemoSize bounds a termMemo; when full it is emptied.
const termMemoSize = 1 << 14

// termMemo maps a lower-cased word to what the query tokenizer made of it.
type termMemo = memo[*wordEntry]

// memo is a map safe for concurrent use, emptied when it reaches the
// bound its put is given.
type memo[V any] struct {
	mu sync.RWMutex
	m  map[string]V
}

func (c *memo[V]) get(k string) (V, bool) {
	c.mu.RLock()
	v, ok := c.m[k]
	c.mu.RUnlock()
	return v, ok
}

func (c *memo[V]) put(k string, v V, bound int) {
	c.mu.Lock()
	if c.m == nil || len(c.m) >= bound {
		c.m = make(map[string]V, 256)
	}
	c.m[strings.Clone(k)] = v
	c.mu.Unlock()
}

// wordEntry is a word's term ("" when dropped) and its expansions.
type wordEntry struct {
	term string
	ex   *expansions // nil unless the tokenizer expands
}

// expansions are a term's related terms from the built-in tables.
type expansions struct {
	synonyms []string
	rel      wordRelations
	trans    []string
}

func expansionsOf(term string) expansions {
	return expansions{synonyms: synonymsOf(term), rel: relationsOf(term), trans: translationsOf(term)}
}

// NewTokenizer returns a Tokenizer with opts.
func NewTokenizer(opts TokenizerOptions) *Tokenizer { return &Tokenizer{opts: opts} }

// Tokens returns the terms of s in order, repeats included.
func (t *Tokenizer) Tokens(s string) []string {
	// About one term in eight bytes of text (stop words dropped): one
	// allocation where growing from nil takes five or six for a request.
	dst := make([]string, 0, len(s)/8+1)
	t.each(s, func(term string, _ wordKind) { dst = append(dst, term) })
	return dst
}

// each calls fn with each term of s and the kind of word it came from.
func (t *Tokenizer) each(s string, fn func(term string, kind wordKind)) {
	splitWords(s, func(w string, kind wordKind) {
		if term, ok := t.term(w, kind); ok {
			fn(term, kind)
		}
	})
}

// eachWord is each that also passes each term's expansions (nil when
// not kept) and the lower-cased word it came from.
func (t *Tokenizer) eachWord(s string, fn func(term string, kind wordKind, ex *expansions, word string)) {
	splitWords(s, func(w string, kind wordKind) {
		if t.memo == nil {
			if term, ok := t.term(w, kind); ok {
				fn(term, kind, nil, w)
			}
			return
		}
		if e := t.entry(w, kind); e.term != "" {
			fn(e.term, kind, e.ex, w)
		}
	})
}

// term normalises one lower-cased word; ok is false when it is dropped.
func (t *Tokenizer) term(w string, kind wordKind) (string, bool) {
	if t.memo == nil {
		if kind == wordCJK {
			return w, true
		}
		return t.normalise(w)
	}
	e := t.entry(w, kind)
	return e.term, e.term != ""
}

// entry returns the memo's entry for w, making it on first sight.
func (t *Tokenizer) entry(w string, kind wordKind) *wordEntry {
	if e, ok := t.memo.get(w); ok {
		return e
	}
	e := &wordEntry{term: w}
	if kind != wordCJK {
		e.term, _ = t.normalise(w)
	}
	if t.expand && e.term != "" {
		ex := expansionsOf(e.term)
		e.ex = &ex
	}
	t.memo.put(w, e, termMemoSize)
	return e
}

// normalise is term for a word of a script with spaces.
func (t *Tokenizer) normalise(w string) (string, bool) {
	switch {
	case isNumber(w): // a value or a count, not which tool (base64 is kept)
		return "", false
	case stopWords[w]:
		return "", false
	case t.query && fillerWords[w]:
		return "", false
	case !t.opts.NoStem && isASCIIAlpha(w):
		return stem(w), true
	}
	return w, true
}

// splitWords calls emit with each lower-cased word of s: identifier parts,
// and bigrams of runs of scripts without spaces.
func splitWords(s string, emit func(w string, kind wordKind)) {
	start, class := 0, classSep
	flush := func(end int) {
		switch class {
		case classWord:
			splitIdentifier(s[start:end], emit)
		case classCJK:
			emitBigrams(s[start:end], emit)
		}
	}
	for i, r := range s {
		c := runeClass(r)
		if c == classMark && class == classWord {
			continue // a combining mark belongs to the word before it
		}
		if c != class {
			flush(i)
			start, class = i, c
		}
	}
	flush(len(s))
}

// wordKind tells where a word came from.
type wordKind uint8

const (
	wordPlain  wordKind = iota // a word or one part of an identifier
	wordJoined                 // a two-part camelCase identifier, joined: youtube
	wordCJK                    // a bigram or lone character of a script without spaces
)

const (
	classSep = iota
	classWord
	classCJK
	classMark
)

func runeClass(r rune) int {
	switch {
	case r < utf8.RuneSelf:
		if 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' {
			return classWord
		}
		return classSep
	case isNoSpaceScript(r):
		return classCJK
	case unicode.IsLetter(r) || unicode.IsDigit(r):
		return classWord
	case unicode.IsMark(r):
		return classMark
	}
	return classSep
}

var noSpaceScripts = []*unicode.RangeTable{
	unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul,
	unicode.Thai, unicode.Lao, unicode.Khmer, unicode.Myanmar,
}

func isNoSpaceScript(r rune) bool {
	// The prolonged sound mark (サーバー) belongs to no script but to the word.
	return unicode.IsOneOf(noSpaceScripts, r) || r == 'ー' || r == 'ｰ'
}

// emitBigrams emits the overlapping character bigrams of a run of a
// script without spaces, or the run itself when it is one character long.
func emitBigrams(run string, emit func(string, wordKind)) {
	if utf8.RuneCountInString(run) == 1 {
		emit(run, wordCJK)
		return
	}
	prev := 0
	_, size := utf8.DecodeRuneInString(run)
	for i := size; i < len(run); {
		_, n := utf8.DecodeRuneInString(run[i:])
		emit(run[prev:i+n], wordCJK)
		prev, i = i, i+n
	}
}

// splitIdentifier emits the parts of a run of letters and digits split at
// camelCase boundaries (HTTPServer → http server; base64 stays whole).
// A run of two parts is emitted joined as well (YouTube: youtube).
func splitIdentifier(run string, emit func(string, wordKind)) {
	if isASCIIAlpha(run) { // lower-case letters only, the commonest run: one part
		emit(run, wordPlain)
		return
	}
	parts, start, prev := 0, 0, rune(-1)
	for i, r := range run {
		if i > 0 && camelBoundary(prev, r, run[i+utf8.RuneLen(r):]) {
			emit(strings.ToLower(run[start:i]), wordPlain)
			start = i
			parts++
		}
		prev = r
	}
	emit(strings.ToLower(run[start:]), wordPlain)
	if parts == 1 {
		emit(strings.ToLower(run), wordJoined)
	}
}

// camelBoundary reports whether a new word starts at r, given the rune
// before it and the rest of the run after it.
func camelBoundary(prev, r rune, rest string) bool {
	if !unicode.IsUpper(r) {
		return false
	}
	if !unicode.IsUpper(prev) && !unicode.IsDigit(prev) {
		return unicode.IsLower(prev)
	}
	next, _ := utf8.DecodeRuneInString(rest)
	return unicode.IsLower(next)
}

// stemCacheSize bounds the stem cache; when full it is emptied.
const stemCacheSize = 1 << 16

// stems caches the Snowball stems of words, the tokenizer's main cost.
var stems memo[string]

// stem returns the Snowball English stem of the lower-case word w.
func stem(w string) string {
	s, ok := stems.get(w)
	if !ok {
		s = english.Stem(w, true)
		stems.put(w, s, stemCacheSize)
	}
	return s
}

func isNumber(w string) bool {
	return !strings.ContainsFunc(w, func(r rune) bool { return !unicode.IsDigit(r) })
}

func isASCIIAlpha(w string) bool {
	for i := 0; i < len(w); i++ {
		if w[i] < 'a' || w[i] > 'z' {
			return false
		}
	}
	return true
}
