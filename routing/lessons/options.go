package lessons

import (
	"cmp"
	"context"
	"log/slog"
	"time"

	"github.com/mcp-router/mcp-router/internal/defaults"
)

// MemoryOptions configures a Memory. Zero values take the defaults in
// brackets.
type MemoryOptions struct {
	// MaxLessons bounds the lessons kept; past it, the least recently used go [1000].
	MaxLessons int
	// MaxPerPrincipal bounds one principal's lessons; past it, its own go [200].
	MaxPerPrincipal int
	// Shared makes every lesson apply to every principal's requests; unset,
	// a principal's lessons steer its own routing only.
	Shared bool
	// MaxBytes bounds the lessons' query, tool and note bytes; past it, the
	// least recently used go, and a larger lesson is refused [4 MiB].
	MaxBytes int
	// MinSimilarity: below it (package doc), a lesson does not apply [0.5].
	MinSimilarity float64
	// ProfileFloor is the profile similarity (profile.go) below which a
	// tool's lessons together do not boost it [0.2]; ProfileWeight weighs
	// that boost [0.5], and negative turns profiles off.
	ProfileFloor  float64
	ProfileWeight float64
	// MaxBoost is the most positive lessons add to a score [0.3];
	// MaxPenalty the most negative ones take away [0.5].
	MaxBoost   float64
	MaxPenalty float64
	// HalfLife is the time since its last use in which a lesson's weight
	// halves [30 days].
	HalfLife time.Duration
	// Now tells the time [time.Now].
	Now func() time.Time
	// Embed, when set, embeds lesson and request queries (package doc).
	Embed func(ctx context.Context, text string) ([]float32, error)
	// EmbedFloor is the cosine that rescales to similarity 0 [0.5].
	EmbedFloor float64
	// SyncEvery is how often Run reloads lessons another process changed [2s].
	SyncEvery time.Duration
	// MaxOffered bounds the offers waiting to be learned [64].
	MaxOffered int
	// Logger receives warnings; nil is silent.
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
	defaults.Set(&o.MaxLessons, DefaultMaxLessons)
	defaults.Set(&o.MaxPerPrincipal, DefaultMaxPerPrincipal)
	defaults.Set(&o.MaxBytes, DefaultMaxBytes)
	defaults.Set(&o.MaxBoost, DefaultMaxBoost)
	defaults.Set(&o.MaxPenalty, DefaultMaxPenalty)
	defaults.Set(&o.HalfLife, DefaultHalfLife)
	defaults.Set(&o.SyncEvery, DefaultSyncEvery)
	defaults.Set(&o.MaxOffered, DefaultMaxOffered)
	if o.MinSimilarity <= 0 || o.MinSimilarity > 1 {
		o.MinSimilarity = DefaultMinSimilarity
	}
	if o.ProfileFloor <= 0 || o.ProfileFloor > 1 {
		o.ProfileFloor = DefaultProfileFloor
	}
	o.ProfileWeight = min(cmp.Or(o.ProfileWeight, DefaultProfileWeight), 1)
	if o.EmbedFloor <= 0 || o.EmbedFloor >= 1 {
		o.EmbedFloor = DefaultEmbedFloor
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
}
