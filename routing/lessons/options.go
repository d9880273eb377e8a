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
	MaxLessons      int // bounds the lessons kept; past it, the least recently used go [1000]
	MaxPerPrincipal int // bounds one principal's lessons; past it, its own go [200]
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
	Embed      func(ctx context.Context, text string) ([]float32, error)
	MaxOffered int          // bounds the offers waiting to be learned [64]
	Logger     *slog.Logger // receives warnings; nil is silent
}

// Defaults for MemoryOptions.
const (
	DefaultMaxLessons      = 1000
	DefaultMaxPerPrincipal = 200
	DefaultMaxBytes        = 4 << 20
	DefaultProfileWeight   = 0.5
)

const (
	minSimilarity = 0.5                 // below it (package doc), a lesson does not apply
	profileFloor  = 0.2                 // below it a tool's lessons together do not boost it (profile.go)
	maxBoost      = 0.3                 // the most positive lessons add to a score
	maxPenalty    = 0.5                 // the most negative lessons take away
	halfLife      = 30 * 24 * time.Hour // since its last use, in which a lesson's weight halves
	embedFloor    = 0.5                 // the cosine that rescales to similarity 0
	syncEvery     = 2 * time.Second     // how often Run reloads lessons another process changed
)

func (o *MemoryOptions) defaults() {
	defaults.Set(&o.MaxLessons, DefaultMaxLessons)
	defaults.Set(&o.MaxPerPrincipal, DefaultMaxPerPrincipal)
	defaults.Set(&o.MaxBytes, DefaultMaxBytes)
	defaults.Set(&o.MaxOffered, DefaultMaxOffered)
	o.ProfileWeight = min(cmp.Or(o.ProfileWeight, DefaultProfileWeight), 1)
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
}
