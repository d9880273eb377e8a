package routing

import (
	"cmp"
	"math"
	"slices"
	"strings"
)

// A request's action weighed against a tool's verb: among one server's
// tools, a request that stores, deletes or reads ("remember that Ada likes
// Go") ranks those whose name's verb does something else lower, when the
// server has a tool that does what it asks.

// action is what a verb does to the things a server keeps, as a bit.
type action uint8

const (
	storing action = 1 << iota
	deleting
	reading
)

// actionVerbs are the verbs of each action, as stems.
var actionVerbs = func() map[string]action {
	m := map[string]action{}
	for a, verbs := range map[action]string{
		storing:  "remember memorize memorise save store record keep add create write insert append upload",
		deleting: "forget delete remove erase drop clear purge wipe destroy discard",
		reading:  "read get show open search find list recall fetch look view retrieve display lookup load",
	} {
		for _, w := range words.Tokens(verbs) {
			m[w] = a
		}
	}
	return m
}()

// offAction is the multiplier of a tool whose name's verb does other than
// the request asks, when a tool of its server does what it asks.
const offAction = 0.7

// actionsOf is the actions the verbs of text ask for; in a what, which,
// where, who or when question a storing verb reads ("what do you
// remember about Ada").
func actionsOf(text string) action {
	var a action
	words.each(text, func(w string, _ wordKind) { a |= actionVerbs[w] })
	if a&storing != 0 && asksWhat(text) {
		a = a&^storing | reading
	}
	return a
}

// asksWhat reports whether text opens with what, which, where, who, when
// or whose.
func asksWhat(text string) bool {
	first, _, _ := strings.Cut(strings.TrimSpace(text), " ")
	return slices.Contains([]string{"what", "which", "where", "who", "when", "whose"}, strings.ToLower(strings.TrimRight(first, "'’s")))
}

// toolAction is the action of the first verb of t's own name, 0 for none.
func toolAction(t Tool) action {
	for _, w := range words.Tokens(cmp.Or(t.Original, t.Name)) {
		if a, ok := actionVerbs[w]; ok {
			return a
		}
	}
	return 0
}

// weighActions lowers, in ranked, the tools whose verb does other than
// text asks, of servers with a tool that does what it asks; the caller
// sorts.
func (r *Router) weighActions(text string, ranked []Candidate) {
	acts := make([]action, len(ranked))
	var seen action
	r.mu.Lock()
	for i, c := range ranked {
		acts[i] = r.acts[c.Name]
		seen |= acts[i]
	}
	r.mu.Unlock()
	if seen&(seen-1) == 0 {
		return // one action or none: no tool is beside one that does otherwise
	}
	asked := actionsOf(text)    // read only now: it tokenizes the request again
	serves := map[string]bool{} // upstreams with a tool that does what is asked
	for i, c := range ranked {
		if acts[i]&asked != 0 {
			serves[c.Upstream] = true
		}
	}
	for i := range ranked {
		c := &ranked[i]
		if acts[i] != 0 && acts[i]&asked == 0 && serves[c.Upstream] {
			c.Multiplier *= offAction
			c.adjusted = c.RawScore * c.Multiplier
			c.Score = math.Min(1, c.adjusted)
		}
	}
}
