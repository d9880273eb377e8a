package proxy

import (
	"log/slog"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// upstreamEnv is what an upstream needs from the one that owns it, handed
// to it at creation: settings, the shared progress router and relay, the
// vetting of what it lists, and who hears that its listing changed. The
// hub fills it (Hub.upstreamEnv) with its options, defaults applied: the
// durations and bounds here have no defaults of their own, and a zero
// maxInFlight would admit no call.
// An upstream reaches nothing above it but through these, so data flows
// one way, hub to upstream; TestRoomsFlowOneWay holds it to that.
type upstreamEnv struct {
	// logger receives the upstream's events (it adds the upstream's name
	// and scrubs its secrets); never nil.
	logger *slog.Logger
	// metrics counts the upstream's state, restarts and dropped
	// notifications; nil counts nothing.
	metrics *Metrics
	// builtin builds the in-process server of a TransportBuiltin
	// upstream; nil in a build without built-in servers.
	builtin BuiltinFunc
	// version is reported to the upstream as the client's version.
	version string

	// initTimeout bounds connect, initialize and listing.
	initTimeout time.Duration
	// backoffMin and backoffMax bound the delay between attempts.
	backoffMin, backoffMax time.Duration
	// refreshDebounce coalesces bursts of list_changed.
	refreshDebounce time.Duration
	// reconnectWait is how long a call waits for an upstream that is
	// restarting before it fails.
	reconnectWait time.Duration
	// maxInFlight calls run at once on the upstream, and maxQueue more
	// may wait for a slot.
	maxInFlight, maxQueue int
	// notifications bounds the notifications the upstream may send.
	notifications NotificationLimit

	// progress hands out the progress tokens of the upstream's calls and
	// routes its progress reports to their callers.
	progress *progressRouter
	// relay is where what the upstream asks of, or tells, a client goes;
	// it returns nil while there is none.
	relay func() Relay
	// vet checks listed tools against their pins and scans them for
	// poisoning: it returns the tools to expose and, by own name, why each
	// other one is blocked. Problems with the pins go to logger, what it
	// finds to findings.
	vet func(cfg UpstreamConfig, logger, findings *slog.Logger, tools []mcp.Tool) (kept []mcp.Tool, blocked map[string]string)
	// listed hears that u has a new listing; first is set for the
	// listing of its first connection attempt.
	listed func(u *upstream, first bool)
}
