package call

import "fmt"

// Kind classifies a failed call.
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
	// KindInvalidArguments: the arguments violate the tool's inputSchema.
	KindInvalidArguments Kind = "invalid_arguments"
	// KindResultBlocked: a result with secrets or injection markers under
	// the block result policy (SEC-11).
	KindResultBlocked Kind = "result_blocked"
	// KindStarting: the upstream is still on its first attempt.
	KindStarting Kind = "upstream_starting"
	// KindQuotaExceeded: refused by a quota of its principal and tool.
	KindQuotaExceeded Kind = "quota_exceeded"
	// KindRepeatedCall: the session made the same call too often in a row.
	KindRepeatedCall Kind = "repeated_call"
	// KindAuthRequired: the upstream asks for authorization (HTTP 401).
	KindAuthRequired Kind = "auth_required"
)

// Error is a failed call. Its message is safe to show a model: it names
// the tool, the upstream and the reason, never headers, env values or URLs.
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
