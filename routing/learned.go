package routing

import (
	_ "embed"
	"strings"
	"sync"
)

//go:generate go run ./internal/learngen -out learned.txt

// learnedText is the table learned at build time from public requests
// paired with the tools that serve them (see internal/learn and
// LEARNED_LICENSES): which words of people's requests point to which
// words of tool texts.
//
//go:embed learned.txt
var learnedText string

// LearnedLicenses are the licences of the data the learned table was
// derived from, distributed with it in every copy of the program.
//
//go:embed LEARNED_LICENSES
var LearnedLicenses string

// learnedWeight is a learned target's weight relative to the request's
// own word.
const learnedWeight = 0.2

// Learned maps a request's words (stems) to the words of tool texts that
// requests with them were served by.
type Learned struct {
	targets map[string][]string
}

// ParseLearned reads a learned table: # comments, blank lines, and
// lines of a stem, a tab, and its targets separated by spaces.
func ParseLearned(text string) *Learned {
	l := &Learned{targets: map[string][]string{}}
	for _, line := range tableLines(text) {
		w, ts, ok := strings.Cut(line, "\t")
		if ok {
			l.targets[w] = strings.Fields(ts)
		}
	}
	return l
}

// builtinLearned is the embedded table.
var builtinLearned = sync.OnceValue(func() *Learned { return ParseLearned(learnedText) })

// of returns the targets of stem.
func (l *Learned) of(stem string) []string {
	if l == nil {
		return nil
	}
	return l.targets[stem]
}
