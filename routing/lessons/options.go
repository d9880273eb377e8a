package lessons

import (
	"context"
	"log/slog"
	"time"
)

// MemoryOptions configures a Memory. Zero values take the defaults in
// brackets.
type MemoryOptions struct {
	// MaxLessons bounds the lessons kept; past it, learning a new lesson
	// evicts the least recently used (LastUsed, then Created) [1000].
	MaxLessons int
	// MaxPerPrincipal bounds the lessons of one principal; past it, that
	// principal's new lesson evicts its own least recently used, never
	// another's [200].
	MaxPerPrincipal int
	// Shared makes every lesson apply to every principal's requests: a
	// lesson is learned without its principal (Lesson.Principal empty).
	// Unset, one principal's lessons (its routing_feedback, its detours)
	// steer its own routing only.
	Shared bool
	// MaxBytes bounds the text the lessons keep (query, tool and note of
	// each); past it, learning evicts the least recently used, and a
	// lesson larger than it alone is refused (ErrTooLarge) [4 MiB].
	MaxBytes int
	// MinSimilarity is the similarity (package doc) below which a lesson
	// does not apply to a query [0.5].
	MinSimilarity float64
	// ProfileFloor is the profile similarity (profile.go) below which
	// the lessons of a tool, taken together, do not boost it for a query
	// [0.2]; ProfileWeight is the weight, times that similarity, of the
	// boost when they do [0.5]: negative turns profiles off.
	ProfileFloor  float64
	ProfileWeight float64
	// MaxBoost is the most that positive lessons add to a tool's score
	// [0.3]; MaxPenalty the most that negative ones take away [0.5].
	MaxBoost   float64
	MaxPenalty float64
	// HalfLife is the time, since a lesson was last used, in which its
	// weight halves [30 days].
	HalfLife time.Duration
	// Now tells the time [time.Now].
	Now func() time.Time
	// Embed, when set, embeds lesson queries and request queries, and the
	// similarity is the larger of the lexical one and the rescaled cosine.
	// A failing Embed leaves the lexical similarity alone in force.
	Embed func(ctx context.Context, text string) ([]float32, error)
	// EmbedFloor is the cosine that rescales to similarity 0: the
	// embedding similarity is (cos − EmbedFloor) / (1 − EmbedFloor),
	// clipped to [0, 1], since unrelated texts already have cosines well
	// above 0 [0.5].
	EmbedFloor float64
	// SyncEvery is how often Run asks the store whether another process
	// changed the lessons, and reloads them when it did [2s].
	SyncEvery time.Duration
	// MaxOffered bounds the lessons Offer holds while they wait to be
	// learned; past it an offer is dropped [64].
	MaxOffered int
	// Logger receives warnings (a lesson that could not be embedded, a
	// periodic flush that failed); nil is silent.
	Logger *slog.Logger
}

// Defaults for MemoryOptions.
const (
	DefaultMaxLessons      = 1000
	DefaultMaxPerPrincipal = 200
	DefaultMaxBytes        = 4 << 20
	DefaultMinSimilarity   = 0.5
	DefaultProfileFloor    = 0.2
	DefaultProfileWeight   = 0.5
	DefaultMaxBoost        = 0.3
	DefaultMaxPenalty      = 0.5
	DefaultHalfLife        = 30 * 24 * time.Hour
	DefaultEmbedFloor      = 0.5
	DefaultSyncEvery       = 2 * time.Second
)

func (o *MemoryOptions) defaults() {
	if o.MaxLessons <= 0 {
		o.MaxLessons = DefaultMaxLessons
	}
	if o.MaxPerPrincipal <= 0 {
		o.MaxPerPrincipal = DefaultMaxPerPrincipal
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.MinSimilarity <= 0 || o.MinSimilarity > 1 {
		o.MinSimilarity = DefaultMinSimilarity
	}
	if o.ProfileFloor <= 0 || o.ProfileFloor > 1 {
		o.ProfileFloor = DefaultProfileFloor
	}
	if o.ProfileWeight == 0 {
		o.ProfileWeight = DefaultProfileWeight
	}
	o.ProfileWeight = min(o.ProfileWeight, 1)
	if o.MaxBoost <= 0 {
		o.MaxBoost = DefaultMaxBoost
	}
	if o.MaxPenalty <= 0 {
		o.MaxPenalty = DefaultMaxPenalty
	}
	if o.HalfLife <= 0 {
		o.HalfLife = DefaultHalfLife
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.EmbedFloor <= 0 || o.EmbedFloor >= 1 {
		o.EmbedFloor = DefaultEmbedFloor
	}
	if o.SyncEvery <= 0 {
		o.SyncEvery = DefaultSyncEvery
	}
	if o.MaxOffered <= 0 {
		o.MaxOffered = DefaultMaxOffered
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
}
