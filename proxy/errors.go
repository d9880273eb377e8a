package proxy

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/mcp-router/mcp-router/proxy/call"
	"github.com/mcp-router/mcp-router/proxy/internal/upstream"
	"github.com/mcp-router/mcp-router/proxy/internal/wire"
)

// Kind classifies a failed call ([call.Kind]).
type Kind = call.Kind

// The kinds of failed call, as package call names them.
const (
	KindUnavailable      = call.KindUnavailable
	KindTimeout          = call.KindTimeout
	KindProtocol         = call.KindProtocol
	KindCancelled        = call.KindCancelled
	KindUnknownTool      = call.KindUnknownTool
	KindBlocked          = call.KindBlocked
	KindCircuitOpen      = call.KindCircuitOpen
	KindQueueFull        = call.KindQueueFull
	KindTooLarge         = call.KindTooLarge
	KindUpstreamError    = call.KindUpstreamError
	KindRateLimited      = call.KindRateLimited
	KindInvalidArguments = call.KindInvalidArguments
	KindResultBlocked    = call.KindResultBlocked
	KindStarting         = call.KindStarting
	KindQuotaExceeded    = call.KindQuotaExceeded
	KindRepeatedCall     = call.KindRepeatedCall
	KindAuthRequired     = call.KindAuthRequired
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

// UpstreamError is a failed call: which stage refused it, or what its
// upstream answered ([call.Error]).
type UpstreamError = call.Error

// MaxErrorSummaryBytes bounds the text of an upstream's failure that
// reaches the model: an HTTP error page or a stack trace is cut there, once,
// on one line, with a note of its length; the whole text (itself bounded by
// the error-body limit, and scrubbed) goes to the gateway's log.
const MaxErrorSummaryBytes = 512

// summarizeError is msg as the model sees it: control characters and runs of
// white space as one space, cut at MaxErrorSummaryBytes (on a character
// boundary) with a note saying how long it was. It reports whether msg
// was cut.
func summarizeError(msg string) (string, bool) {
	if len(msg) <= MaxErrorSummaryBytes && !strings.ContainsFunc(msg, unicode.IsControl) {
		return msg, false
	}
	var b strings.Builder
	space := false
	for _, r := range msg {
		if unicode.IsControl(r) || unicode.IsSpace(r) {
			space = true
			continue
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		if b.Len()+utf8.RuneLen(r) > MaxErrorSummaryBytes {
			return fmt.Sprintf("%s… (%d bytes in all; the whole text is in the gateway's log)", b.String(), len(msg)), true
		}
		b.WriteRune(r)
	}
	return b.String(), false
}

// logCut logs the whole text of an upstream's failure whose summary the
// model got.
func logCut(log *slog.Logger, upstream, tool, full string) {
	log.Warn("upstream error text cut for the model", "upstream", upstream, "tool", tool, "bytes", len(full), "err", full)
}
