// Package lessons is the router's experience memory (tier 3 of routing in
// docs/design.md): routing that learns from its detours and from
// corrections.
//
// A lesson says "for queries like this one, use (or avoid) this tool". It
// comes from a detour (the model asked for more tools, then succeeded with
// one the ranking had not selected), offered with [Memory.Offer], or from a
// correction (routing_feedback). A [Memory] indexes every lesson of a
// [Store] (shared by every gateway on the machine) by the routing
// tokenizer's terms; [Memory.AdjustFor] turns the lessons similar to a
// request into bounded score deltas and [Apply] adds them to a ranking.
//
// # Similarity
//
// A lesson applies to a query when their similarity reaches minSimilarity
// [0.5]: an IDF-weighted Jaccard index of their distinct terms,
//
//	sim(q, l) = Σ_{t ∈ q∩l} idf(t) / Σ_{t ∈ q∪l} idf(t)
//	idf(t)    = ln(1 + (N − df + 0.5) / (df + 0.5)),  df = max(1, queries containing t)
//
// with N the number of distinct lesson queries; equal normalised queries
// score 1. Jaccard charges the terms either side lacks, so a long query that
// merely contains a lesson's words stays below the gate (a cosine brought in
// 2.5 times as many wrong tools on routing/eval TestLessonsMeasurement).
// With MemoryOptions.Embed, the rescaled cosine (cos − embedFloor) /
// (1 − embedFloor) counts when larger.
//
// # Adjustments
//
// A lesson weighs w = sim × 2^(−age/halfLife), age counted from its last
// use. A tool's positive weights combine as a noisy OR, boost = maxBoost ×
// (1 − Π(1 − w_i)), its negative ones likewise into a penalty of at most
// maxPenalty, and the delta is boost − penalty. The positive lessons of a
// tool also vote word by word as its profile (profile.go).
//
// A lesson never makes a tool appear for an unrelated query: [Apply]
// changes only tools already among the ranking's candidates.
package lessons
