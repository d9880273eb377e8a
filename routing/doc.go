// Package routing picks the tools a session sees: it ranks the catalog for a
// query (lexical index, optional embeddings), applies domain affinity and
// collision alerts, and fuses the model's stated needs with the ranking.
//
// The lexical index is the embedded default (decision 6 in
// docs/design.md): a BM25F retriever in pure Go over tool names,
// descriptions, parameter names and descriptions, and the upstream and
// domain names, with stemming, a small general synonym lexicon and phrase
// (bigram) matches, scored through one list of signals (signal.go), where
// another signal is added; each one stays only while the ablation in
// routing/eval (TestAblation) says it pays. A
// request of several clauses ("find X, then do Y") is re-ranked so that
// each clause's best tools reach the top (diversify.go). Its scores are
// calibrated to [0, 1] (decision 5 in docs/design.md, calibrate.go) so that
// one threshold means the same thing on any catalog. Package routing/eval
// measures it on the shared tool-retrieval benchmark.
package routing
