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
	// ProfileWeight weighs a profile's boost (profile.go) [0.5]; negative
	// turns profiles off.
	ProfileWeight float64
	// Now tells the time [time.Now].
	Now func() time.Time
	// Embed, when set, embeds lesson and request queries (package doc).
	Embed func(ctx context.Context, text string) ([]float32, error)
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
	DefaultProfileWeight   = 0.5
	DefaultSyncEvery       = 2 * time.Second
)

const (
	// minSimilarity: below it (package doc), a lesson does not apply.
	minSimilarity = 0.5
	// profileFloor is the profile similarity (profile.go) below which a
	// tool's lessons together do not boost it.
	profileFloor = 0.2
	// maxBoost is the most positive lessons add to a score; maxPenalty the
	// most negative ones take away.
	maxBoost   = 0.3
	maxPenalty = 0.5
	// halfLife is the time since its last use in which a lesson's weight
	// halves.
	halfLife = 30 * 24 * time.Hour
	// embedFloor is the cosine that rescales to similarity 0.
	embedFloor = 0.5
)

func (o *MemoryOptions) defaults() {
	defaults.Set(&o.MaxLessons, DefaultMaxLessons)
	defaults.Set(&o.MaxPerPrincipal, DefaultMaxPerPrincipal)
	defaults.Set(&o.MaxBytes, DefaultMaxBytes)
	defaults.Set(&o.SyncEvery, DefaultSyncEvery)
	defaults.Set(&o.MaxOffered, DefaultMaxOffered)
	o.ProfileWeight = min(cmp.Or(o.ProfileWeight, DefaultProfileWeight), 1)
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
}
