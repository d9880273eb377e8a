// Package routing picks the tools a session sees: it ranks the catalog for a
// query (lexical index, optional embeddings), applies domain affinity and
// collision alerts, and fuses the model's stated needs with the ranking.
//
// The lexical index is the embedded default (decision 6 in
// docs/design.md): BM25F in pure Go over tool names, descriptions,
// parameters and domains, with stemming, a small synonym lexicon and
// phrase (bigram) matches; each heuristic stays only while the ablation
// in routing/eval (TestAblation) says it pays. A request of several
// clauses is re-ranked so that each clause's best tools reach the top
// (diversify.go), and scores are calibrated to [0, 1] (calibrate.go) so
// that one threshold means the same on any catalog.
package routing
