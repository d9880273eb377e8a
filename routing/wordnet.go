package routing

import (
	_ "embed"
	"strings"
	"sync"
)

//go:generate go run ./internal/wngen -out wordnet.txt

// wordnetTable is the word table derived from WordNet 3.0 at build time
// (see internal/wngen and WORDNET_LICENSE).
//
//go:embed wordnet.txt
var wordnetTable string

// WordNetLicense is WordNet's licence, with which the table derived from
// it is distributed in every copy of the program (see WORDNET_LICENSE).
//
//go:embed WORDNET_LICENSE
var WordNetLicense string

// wordRelations are one stem's relations in the WordNet table.
type wordRelations struct {
	derived []string // the same idea as another part of speech: remember, memory
	notNoun uint8    // the share of its use not as a noun, in tenths (10 for find)
	english bool     // the table holds the word
}

// wordnet is the WordNet table, parsed on first use.
var wordnet = sync.OnceValue(func() map[string]wordRelations { return parseWordnet(wordnetTable) })

// relationsOf returns stem's relations in the WordNet table.
func relationsOf(stem string) wordRelations { return wordnet()[stem] }

func parseWordnet(table string) map[string]wordRelations {
	m := make(map[string]wordRelations, 65536)
	for line := range strings.Lines(table) {
		if strings.HasPrefix(line, "#") {
			continue
		}
		stem, rest, _ := strings.Cut(strings.TrimSuffix(line, "\n"), "\t")
		der, noun, _ := strings.Cut(rest, "\t")
		r := wordRelations{derived: strings.Fields(der), english: true}
		if len(noun) == 1 && noun[0] >= '0' && noun[0] <= '9' {
			r.notNoun = 10 - (noun[0] - '0')
		}
		m[stem] = r
	}
	return m
}
