package routing

// learnedWeight is a learned target's weight relative to the request's
// own word (0.1, 0.2 and 0.4 measured within 0.002 R@5 of each other,
// see TestLearnedHeldOut).
const learnedWeight = 0.2

// Learned maps a request's words (stems) to words of tool texts that
// requests with them were served by, as the learner in routing/eval derives
// it from requests paired with their tools ("drama" → "show"). Measured
// on data it was not learned from, such a table did not pay
// (docs/routing.md, "A table learned from public data"), so none is
// built in: IndexOptions.Learned is nil unless a caller sets one.
type Learned map[string][]string

// addLearned adds to ts the learned targets of words[i] that the
// request does not already hold, at learnedWeight, as synonyms of it.
func (ix *Index) addLearned(ts *termSet, words []queryTerm, i int) {
	qt := words[i]
	for _, v := range ix.opts.Learned[qt.term] {
		if _, ok := ts.seen[v]; !ok {
			ts.put(v, learnedWeight, termSynonym, qt.segs, i)
		}
	}
}
