package routing

// A request's tools are scored by signals, each adding its evidence to
// the accumulator, in the order of the signals list; that list is the
// one place where they are fused. A signal adds to acc.score (what
// orders the ranking) and, for the part of its score that does not
// say how much of the request the tool itself matches, to the loss
// (acc.lose), so that calibrated scores and abstention (calibrate.go)
// read the tool's own match. A signal may read what the signals before
// it scored.
//
// Adding a signal is one file: a type with a score method, put in the
// list. Signals that need I/O or the session (embeddings, lessons) are
// fused by the Router instead, after the index has ranked.
type signal interface {
	score(ix *Index, acc *accumulator, rq *resolvedQuery)
}

// signals are the index's signals, in the order they score.
var signals = []signal{
	lexicalSignal{}, // BM25F over the tools' fields (search.go)
}

// lexicalSignal is BM25F over the tools' fields, words grouped with
// their synonyms (see accumulate).
type lexicalSignal struct{}

func (lexicalSignal) score(ix *Index, acc *accumulator, rq *resolvedQuery) { ix.accumulate(acc, rq) }
