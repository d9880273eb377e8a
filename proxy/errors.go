package proxy

import (
	"errors"
	"fmt"

	"github.com/mcp-router/mcp-router/proxy/internal/upstream"
	"github.com/mcp-router/mcp-router/proxy/internal/wire"
)

// Kind classifies an upstream failure so callers (and the model) can tell a
// dead upstream from a slow one or a broken one.
type Kind string

// The kinds of upstream failure.
const (
	KindUnavailable   Kind = "upstream_unavailable"
	KindTimeout       Kind = "upstream_timeout"
	KindProtocol      Kind = "upstream_protocol_error"
	KindCancelled     Kind = "cancelled"
	KindUnknownTool   Kind = "unknown_tool"
	KindBlocked       Kind = "tool_blocked"
	KindCircuitOpen   Kind = "circuit_open"
	KindQueueFull     Kind = "queue_full"
	KindTooLarge      Kind = "message_too_large"
	KindUpstreamError Kind = "upstream_error"
	KindRateLimited   Kind = "rate_limited"
	// KindInvalidArguments is a call refused before forwarding because its
	// arguments violate the tool's inputSchema (validate_arguments, BI-07).
	KindInvalidArguments Kind = "invalid_arguments"
	// KindResultBlocked replaces a tool result holding secrets or
	// injection markers under the block result policy (SEC-11).
	KindResultBlocked Kind = "result_blocked"
	// KindStarting is a call of a tool whose upstream is still on its
	// first connection attempt after Options.StartWait.
	KindStarting Kind = "upstream_starting"
	// KindQuotaExceeded is a call refused by a quota of its principal and
	// tool (Options.Quotas).
	KindQuotaExceeded Kind = "quota_exceeded"
	// KindRepeatedCall is a call refused because its session made the
	// same call too many times in a row (Options.RepeatCalls).
	KindRepeatedCall Kind = "repeated_call"
	// KindAuthRequired is a call to an upstream that asks for
	// authorization (HTTP 401): it needs `mcp-router auth login NAME`, or a
	// token in its headers.
	KindAuthRequired Kind = "auth_required"
)

// ErrUnknownTool is returned for a name that is not in the catalog.
var ErrUnknownTool = errors.New("unknown tool")

// ErrAppOnly is returned for a tool its server marks for its app's
// interface only (_meta.ui.visibility without "model").
var ErrAppOnly = errors.New(`its server marks it for its app's interface only (_meta.ui.visibility does not include "model"), ` +
	"so it is not offered to the model and the model cannot call it")

// ErrInvalidArguments is returned, wrapped with the violations, for a call
// whose arguments do not match the tool's input schema.
var ErrInvalidArguments = errors.New("the arguments do not match the tool's input schema")

// ErrNotConnected is returned when an upstream has no live connection.
var ErrNotConnected = upstream.ErrNotConnected

// ErrCircuitOpen is returned while an upstream keeps failing to connect.
var ErrCircuitOpen = upstream.ErrCircuitOpen

// ErrMessageTooLarge is returned when an upstream sends a message over
// the size limit.
var ErrMessageTooLarge = wire.ErrMessageTooLarge

// ErrQueueFull is returned when an upstream has too many calls in flight
// and waiting.
var ErrQueueFull = upstream.ErrQueueFull

// ErrProtocol is returned when an upstream's reply breaks the protocol:
// not JSON, not JSON-RPC 2.0, a batch, a response with both a result and
// an error, or an HTTP reply of another content type.
var ErrProtocol = wire.ErrProtocol

// UpstreamError is a failed call to an upstream. Its message is safe to show
// a model: it names the tool, the upstream and the reason, never headers,
// environment values or URLs.
type UpstreamError struct {
	Kind     Kind
	Upstream string
	Tool     string
	Err      error
}

func (e *UpstreamError) Error() string {
	if e.Upstream == "" {
		return fmt.Sprintf("calling %s: %v", e.Tool, e.Err)
	}
	return fmt.Sprintf("calling %s on %s: %s: %v", e.Tool, e.Upstream, e.Kind, e.Err)
}

func (e *UpstreamError) Unwrap() error { return e.Err }
