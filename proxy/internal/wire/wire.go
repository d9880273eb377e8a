// Package wire checks JSON-RPC messages where they cross the gateway's
// edges, before mcp-go reads them; it imports nothing of the proxy.
//
// Toward clients, the pre-check refuses or drops what mcp-go would read
// wrongly (PrecheckHTTP, StdioFilter). Toward upstreams, LineVet and
// StdinTap check a stdio child's lines and ReplyGuard a streamable-HTTP
// upstream's replies: a broken reply fails its one call with ErrProtocol
// and the connection is kept.
package wire

import (
	"errors"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// ErrProtocol is an upstream reply that breaks the protocol.
var ErrProtocol = errors.New("protocol error")

// ErrMessageTooLarge is an upstream message over the size limit.
var ErrMessageTooLarge = errors.New("message too large")

// MaxMessageBytes is the largest client message the gateway reads (the
// go-sdk's default).
const MaxMessageBytes = 4 << 20

// maxLogValue bounds what a client-chosen value puts in one log line.
const maxLogValue = 256

// LogSafe escapes what is unprintable in a client-chosen value and cuts it,
// so that no client can forge or hide log lines.
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

// Head is a message's first byte and, for an object, its raw id and method.
type Head struct {
	Top        byte
	ID, Method []byte
}

// ReadHead scans msg once and reads its head; the error says why msg is
// not one JSON value or its JSON-RPC members are ambiguous.
func ReadHead(msg []byte) (Head, error) {
	sc, err := scanJSON(msg)
	if err != nil || sc.top != '{' {
		return Head{Top: sc.top}, err
	}
	env, err := envelopeOf(&sc)
	return Head{Top: sc.top, ID: env.id, Method: env.method}, err
}
