// Package lessons is the router's experience memory (tier 3 of routing in
// docs/design.md):
// routing that learns from its detours and from corrections, at once and
// for good.
//
// It sits beside the ranking in the routing data flow. A lesson says "for
// queries like this one, use (or do not use) this tool"; it comes from a
// detour the session noticed by itself (the model asked for more tools and
// then succeeded with one that had not been routed) or from an explicit
// correction (the routing_feedback tool). A detour's lesson is offered
// ([Memory.Offer]) and learned by a worker the Memory owns, off the path
// of the call that ended the detour; [Memory.Close] waits for what was
// offered. [Memory] keeps every lesson in an
// in-memory inverted index over the routing tokenizer's terms; for each
// request, [Memory.Adjust] finds the lessons whose query is similar enough
// and turns them into bounded score deltas, and [Apply] adds those deltas
// to a ranking. Lessons persist in a [Store]: the state package's
// database, which every gateway on the machine shares. When the store
// reports changes (a Version method), a Memory reloads what other
// processes wrote: before each change it makes and every
// MemoryOptions.SyncEvery in [Memory.Run]. The interface is small so that
// a shared store can serve a fleet later.
//
// # Similarity
//
// A lesson applies to a query when their similarity reaches
// MemoryOptions.MinSimilarity [0.5]. The similarity is an IDF-weighted
// Jaccard index of their term sets (the routing tokenizer's terms:
// identifiers split, stop words out, English stemmed; repeats count once):
//
//	sim(q, l) = Σ_{t ∈ q∩l} idf(t) / Σ_{t ∈ q∪l} idf(t)
//	idf(t)    = ln(1 + (N − df + 0.5) / (df + 0.5)),  df = max(1, queries containing t)
//
// with N the number of distinct lesson queries (a query taught with two
// tools counts once). An exact match of the normalised queries
// (lower case, runs of blanks as one space) is 1. Jaccard, rather than a
// cosine, because it charges every term of either side that the other
// lacks: a long query that merely contains a lesson's few words, or a
// lesson that merely contains a short query's one word, stays below the
// gate. The IDF comes from the lessons themselves, so words that many
// lessons share ("find", "get", "information") count for little; a query
// term no lesson has weighs as a term of one lesson (df = 1), the most any
// term weighs, rather than more. With one lesson query every weight is equal
// and the measure is plain Jaccard. On the shared routing benchmark (see
// routing/eval TestLessonsMeasurement), an IDF-weighted cosine at the same
// gate helped unseen queries a little more but brought about two and a
// half times as many wrong tools into a top 5; Jaccard with a lower gate
// (0.3) helped as much for fewer such intrusions. The default gate is the
// cautious one.
//
// When MemoryOptions.Embed is set, the similarity is the larger of the
// lexical one and the rescaled cosine of the embeddings,
// (cos − EmbedFloor) / (1 − EmbedFloor) clipped to [0, 1], so that the
// same gate means "as close as that" for both.
//
// # Adjustments
//
// Each applicable lesson has a weight w = sim × decay, decay =
// 2^(−age/HalfLife) with age the time since the lesson was last used
// (taught again, or applied). The weights of one tool's positive lessons
// combine as a noisy OR, boost = MaxBoost × (1 − Π(1 − w_i)), and so do its
// negative ones, penalty = MaxPenalty × (1 − Π(1 − w_i)); the delta is
// boost − penalty. One lesson alone thus adds polarity × max × sim × decay,
// more lessons add more, and the total never passes MaxBoost or
// MaxPenalty.
//
// The positive lessons of one tool also vote together, word by word, as
// the tool's profile (profile.go): a query reaching enough of a tool's
// profile, though like none of its lessons as a whole, gets a smaller
// boost for it, never past MaxBoost either.
//
// # The product rule
//
// A lesson never makes a tool appear for an unrelated query. The memory's
// part is the gate: below MinSimilarity no lesson applies alone, and
// below ProfileFloor no tool's profile. The router's part
// is to apply a positive delta only to tools already among its ranking
// candidates (the 50 it reads before selection); [Apply] does exactly that,
// ignoring deltas for tools not in the hits it is given. A lesson can lift
// a weak candidate into the belt; it cannot bring in a tool the ranking did
// not consider at all.
package lessons
