// Package eval measures how well a ranker puts the right tools at the top.
//
// It sits beside the routing data flow: it loads a tool-retrieval dataset
// (tools.jsonl and queries.jsonl, the shared routing benchmark's format),
// ranks every query with a [Ranker] (the lexical index or the full Router),
// and reports recall, completeness, NDCG, MRR and latency.
package eval
