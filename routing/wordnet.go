package routing

import (
	_ "embed"
	"strings"
	"sync"
)

//go:generate go run ./internal/wngen -out wordnet.txt

// wordnetTable is the word table derived from WordNet 3.0 at build time
// (see internal/wngen and WORDNET_LICENSE): every plain English word, and
// for common nouns and verbs, as stems, the words sharing their frequent
// senses and the words derived from them across parts of speech.
//
//go:embed wordnet.txt
var wordnetTable string

// wordRelations are one stem's relations in the WordNet table.
type wordRelations struct {
	synonyms []string // share a frequent sense: show, display
	derived  []string // the same idea as another part of speech: remember, memory
}

var (
	wordnetOnce sync.Once
	wordnet     map[string]wordRelations
)

// isEnglish reports whether WordNet knows stem as an English word.
func isEnglish(stem string) bool {
	wordnetOnce.Do(func() { wordnet = parseWordnet(wordnetTable) })
	_, ok := wordnet[stem]
	return ok
}

// relationsOf returns stem's relations in the WordNet table.
func relationsOf(stem string) wordRelations {
	wordnetOnce.Do(func() { wordnet = parseWordnet(wordnetTable) })
	return wordnet[stem]
}

func parseWordnet(table string) map[string]wordRelations {
	m := make(map[string]wordRelations, 65536)
	for line := range strings.Lines(table) {
		if strings.HasPrefix(line, "#") {
			continue
		}
		stem, rest, _ := strings.Cut(strings.TrimSuffix(line, "\n"), "\t")
		syn, der, _ := strings.Cut(rest, "\t")
		m[stem] = wordRelations{synonyms: strings.Fields(syn), derived: strings.Fields(der)}
	}
	return m
}
