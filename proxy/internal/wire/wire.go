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
	"io"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// ErrProtocol is an upstream reply that breaks the protocol.
var ErrProtocol = errors.New("protocol error")

// ErrMessageTooLarge is an upstream message over the size limit.
var ErrMessageTooLarge = errors.New("message too large")

// MaxMessageBytes is the largest client message the gateway reads (the go-sdk's default).
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

// groupWriter writes whole messages to one writer from several goroutines,
// never interleaved. Messages that come during a write are written
// together, in order, with one Write once it ends (group commit): one
// system call and one wake-up of the reader per burst. Each write returns
// once its message is written, with that Write's error.
type groupWriter struct {
	mu      sync.Mutex
	writing bool        // a write is writing
	next    *groupBatch // the messages waiting for it, nil for none
}

// groupBatch is messages written with one Write.
type groupBatch struct {
	buf  []byte
	err  error
	done chan struct{} // closed once buf is written
}

// write writes p to w at once, or in the next batch, which the write in
// progress writes when it is done.
func (g *groupWriter) write(w io.Writer, p []byte) (int, error) {
	g.mu.Lock()
	if g.writing {
		if g.next == nil {
			g.next = &groupBatch{done: make(chan struct{})}
		}
		b := g.next
		b.buf = append(b.buf, p...)
		g.mu.Unlock()
		<-b.done
		if b.err != nil {
			return 0, b.err
		}
		return len(p), nil
	}
	g.writing = true
	g.mu.Unlock()
	n, err := w.Write(p)
	for {
		g.mu.Lock()
		b := g.next
		g.next, g.writing = nil, b != nil
		g.mu.Unlock()
		if b == nil {
			return n, err
		}
		_, b.err = w.Write(b.buf)
		close(b.done)
	}
}
