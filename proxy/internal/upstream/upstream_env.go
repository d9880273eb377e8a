package upstream

import (
	"log/slog"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// Env is what an upstream needs from the one that owns it, handed to it
// at creation: settings, the shared progress router and relay, the
// vetting of what it lists, and who hears that its listing changed. The
// hub fills it with its options, defaults applied: the durations and
// bounds here have no defaults of their own, and a zero MaxInFlight would
// admit no call. An upstream reaches nothing above it but through these:
// this package imports nothing of the hub's, so data flows one way, hub to
// upstream.
type Env struct {
	// Logger receives the upstream's events (it adds the upstream's name
	// and scrubs its secrets); never nil.
	Logger *slog.Logger
	// Metrics counts the upstream's state, restarts and dropped
	// notifications; nil counts nothing.
	Metrics Metrics
	// Builtin builds the in-process server of a TransportBuiltin
	// upstream; nil in a build without built-in servers.
	Builtin BuiltinFunc
	// Version is reported to the upstream as the client's version.
	Version string

	// InitTimeout bounds connect, initialize and listing.
	InitTimeout time.Duration
	// BackoffMin and BackoffMax bound the delay between attempts.
	BackoffMin, BackoffMax time.Duration
	// RefreshDebounce coalesces bursts of list_changed.
	RefreshDebounce time.Duration
	// ReconnectWait is how long a call waits for an upstream that is
	// restarting before it fails.
	ReconnectWait time.Duration
	// MaxInFlight calls run at once on the upstream, and MaxQueue more
	// may wait for a slot.
	MaxInFlight, MaxQueue int
	// Notifications bounds the notifications the upstream may send.
	Notifications NotificationLimit

	// Progress hands out the progress tokens of the upstream's calls and
	// routes its progress reports to their callers.
	Progress *ProgressRouter
	// Relay is where what the upstream asks of, or tells, a client goes;
	// it returns nil while there is none.
	Relay func() Relay
	// Vet checks listed tools against their pins and scans them for
	// poisoning: it returns the tools to expose and, by own name, why each
	// other one is blocked. Problems with the pins go to logger, what it
	// finds to findings.
	Vet func(cfg Config, logger, findings *slog.Logger, tools []mcp.Tool) (kept []mcp.Tool, blocked map[string]string)
	// Listed hears that u has a new listing; first is set for the
	// listing of its first connection attempt.
	Listed func(u *Upstream, first bool)
}

// Metrics counts what an upstream goes through: its connection state, its
// reconnection attempts and the notifications its rate limit dropped.
type Metrics interface {
	UpstreamState(upstream, state string)
	UpstreamRestart(upstream string)
	NotificationDropped(upstream, kind string)
}

// noMetrics counts nothing, for an Env without Metrics.
type noMetrics struct{}

func (noMetrics) UpstreamState(string, string)       {}
func (noMetrics) UpstreamRestart(string)             {}
func (noMetrics) NotificationDropped(string, string) {}
