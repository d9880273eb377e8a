// Package lessons is the router's experience memory (tier 3 of routing in
// docs/design.md): routing that learns from its detours and from
// corrections.
//
// A lesson says "for queries like this one, use (or avoid) this tool". It
// comes from a detour (the model asked for more tools, then succeeded with
// one the ranking had not selected), offered with [Memory.Offer] and learned
// by a worker the Memory owns, or from a correction (routing_feedback). A
// [Memory] indexes every lesson of a [Store] (the state package's database,
// shared by every gateway on the machine) by the routing tokenizer's terms;
// [Memory.AdjustFor] turns the lessons similar to a request into bounded
// score deltas and [Apply] adds them to a ranking. A store with a Version
// method is reloaded when another process changed it.
//
// # Similarity
//
// A lesson applies to a query when their similarity reaches
// MemoryOptions.MinSimilarity [0.5]: an IDF-weighted Jaccard index of their
// distinct terms,
//
//	sim(q, l) = Σ_{t ∈ q∩l} idf(t) / Σ_{t ∈ q∪l} idf(t)
//	idf(t)    = ln(1 + (N − df + 0.5) / (df + 0.5)),  df = max(1, queries containing t)
//
// with N the number of distinct lesson queries; equal normalised queries
// score 1. Jaccard, unlike a cosine, charges the terms either side lacks, so
// a long query that merely contains a lesson's words stays below the gate
// (on routing/eval TestLessonsMeasurement a cosine brought in about 2.5
// times as many wrong tools). With MemoryOptions.Embed set, the similarity
// is the larger of that and the rescaled cosine (cos − EmbedFloor) /
// (1 − EmbedFloor), clipped to [0, 1].
//
// # Adjustments
//
// A lesson weighs w = sim × 2^(−age/HalfLife), age counted from its last
// use. A tool's positive weights combine as a noisy OR, boost = MaxBoost ×
// (1 − Π(1 − w_i)), its negative ones likewise into a penalty of at most
// MaxPenalty, and the delta is boost − penalty. The positive lessons of a
// tool also vote word by word as its profile (profile.go).
//
// A lesson never makes a tool appear for an unrelated query: below the
// gates no lesson or profile applies, and [Apply] changes only tools already
// among the ranking's candidates.
package lessons
