// Package eval measures how well a ranker puts the right tools at the top.
//
// It sits beside the routing data flow, not in it: it loads a tool-retrieval
// dataset (tools.jsonl and queries.jsonl, the format of the shared routing
// benchmark), ranks every query with a [Ranker] (the lexical
// [routing.Index] through [IndexRanker], or the full Router), and reports
// recall, completeness, NDCG, MRR and latency.
package eval
