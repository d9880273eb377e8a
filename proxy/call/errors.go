package call

import "fmt"

// Kind classifies a failed call so callers (and the model) can tell a
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

// Error is a failed call: refused by a stage, or failed at its upstream.
// Its message is safe to show a model: it names the tool, the upstream and
// the reason, never headers, environment values or URLs.
type Error struct {
	Kind     Kind
	Upstream string
	Tool     string
	Err      error
}

func (e *Error) Error() string {
	if e.Upstream == "" {
		return fmt.Sprintf("calling %s: %v", e.Tool, e.Err)
	}
	return fmt.Sprintf("calling %s on %s: %s: %v", e.Tool, e.Upstream, e.Kind, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }
