package upstream

import (
	"log/slog"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// Env is what an upstream needs from the hub that owns it. The hub fills
// it with its options' defaults applied: these fields have none of their
// own (a zero MaxInFlight would admit no call).
type Env struct {
	Logger  *slog.Logger // never nil; the upstream adds its name and scrubs its secrets
	Metrics Metrics      // nil counts nothing
	Builtin BuiltinFunc  // nil in a build without built-in servers
	Version string       // reported to the upstream as the client's version

	InitTimeout            time.Duration // bounds connect, initialize and listing
	BackoffMin, BackoffMax time.Duration // bound the delay between attempts
	RefreshDebounce        time.Duration // coalesces bursts of list_changed
	ReconnectWait          time.Duration // how long a call waits for a restarting upstream
	// MaxInFlight calls run at once, and MaxQueue more may wait.
	MaxInFlight, MaxQueue int
	Notifications         NotificationLimit

	Progress *ProgressRouter
	Relay    func() Relay // nil while there is none
	// Vet checks listed tools against their pins and scans them for
	// poisoning: it returns the tools to expose and why each other one is
	// blocked. Problems with the pins go to logger, findings to findings.
	Vet func(cfg Config, logger, findings *slog.Logger, tools []mcp.Tool) (kept []mcp.Tool, blocked map[string]string)
	// Listed hears that u has a new listing; first for its first attempt's.
	Listed func(u *Upstream, first bool)
}

// Metrics counts an upstream's state, restarts and dropped notifications.
type Metrics interface {
	UpstreamState(upstream, state string)
	UpstreamRestart(upstream string)
	NotificationDropped(upstream, kind string)
}

// noMetrics counts nothing.
type noMetrics struct{}

func (noMetrics) UpstreamState(string, string)       {}
func (noMetrics) UpstreamRestart(string)             {}
func (noMetrics) NotificationDropped(string, string) {}
