// Package wire checks JSON-RPC messages where they cross the gateway's
// edges, before mcp-go reads them. It sits at the bottom of the proxy's
// data flow (server -> hub -> upstream -> wire) and imports nothing of
// the proxy.
//
// Toward clients, the pre-check refuses or drops what mcp-go would read
// wrongly: PrecheckHTTP for streamable-HTTP POSTs and StdioFilter for a
// stdio client's lines (precheck.go, precheck_stdio.go, on the
// allocation-free scanner of jsonscan.go). Toward upstreams, LineVet and
// StdinTap check a stdio child's lines (linevet.go) and ReplyGuard the
// replies of a streamable-HTTP upstream (replyguard.go); both turn a
// broken reply into ErrProtocol for the one call it answers, and keep
// the connection. rpcvet.go holds what both sides share: the parse of
// one message and the check of a reply against the id it answers.
package wire

import (
	"errors"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// ErrProtocol is returned when an upstream's reply breaks the protocol:
// not JSON, not JSON-RPC 2.0, a batch, a response with both a result and
// an error, or an HTTP reply of another content type.
var ErrProtocol = errors.New("protocol error")

// ErrMessageTooLarge is returned when an upstream sends a message over
// the size limit.
var ErrMessageTooLarge = errors.New("message too large")

// MaxMessageBytes is the largest client message the gateway reads, over
// HTTP or as one stdio line: the go-sdk's default limit on one message.
const MaxMessageBytes = 4 << 20

// maxLogValue bounds what a client-chosen value puts in one log line.
const maxLogValue = 256

// LogSafe makes a client-chosen value safe for a log line: anything
// unprintable (CR, LF, ESC, bidi controls, invalid UTF-8) is escaped as
// in a Go string literal, and a long value is cut, so that no client can
// forge or hide log lines. The log handler adds its own quotes.
func LogSafe(s string) string {
	if len(s) > maxLogValue {
		s = s[:maxLogValue] + "..."
	}
	if strings.IndexFunc(s, func(r rune) bool { return !unicode.IsPrint(r) || r == utf8.RuneError }) < 0 {
		return s
	}
	q := strconv.QuoteToASCII(s)
	return q[1 : len(q)-1]
}

// Head is the envelope of one message as written: its first byte and,
// for an object, its id and method members (nil when absent).
type Head struct {
	Top        byte
	ID, Method []byte
}

// ReadHead scans msg once and reads its head. The error says why msg is
// not one JSON value, or why an object's JSON-RPC members are ambiguous
// (named twice, or in another case).
func ReadHead(msg []byte) (Head, error) {
	sc, err := scanJSON(msg)
	if err != nil || sc.top != '{' {
		return Head{Top: sc.top}, err
	}
	env, err := envelopeOf(&sc)
	return Head{Top: sc.top, ID: env.id, Method: env.method}, err
}
