package wire

// The pre-check over stdio: a filter between the client's input and
// mcp-go's StdioServer, and a writer that keeps whole messages whole.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
)

// maxStdioMessage bounds one line from a stdio client, as Guard bounds an
// HTTP body (FI-12 in docs/reliability.md): a longer line is skipped up to its
// newline and answered -32600, and the session goes on.
const maxStdioMessage = MaxMessageBytes

// StdioFilter pre-checks each line a stdio client sends: it answers or
// drops the bad ones itself and hands the rest to mcp-go. It also keeps
// the connection's handshake (BI-10), which mcp-go's stdio server does
// not: until initialize is answered only ping and
// initialize itself are served, and initialize is served once.
type StdioFilter struct {
	out     *stdioOut
	life    *handshake
	log     *slog.Logger
	maxLine int
}

func NewStdioFilter(out io.Writer, log *slog.Logger) *StdioFilter {
	life := &handshake{}
	return &StdioFilter{out: &stdioOut{life: life, w: out}, life: life, log: log, maxLine: maxStdioMessage}
}

// Out is where mcp-go writes its answers: each whole message is written
// at once, and the handshake learns when initialize is answered.
func (f *StdioFilter) Out() io.Writer { return f.out }

// WriteOwn writes p, one whole message of the proxy's own making (not a
// reply mcp-go wrote), to the client, between mcp-go's messages.
func (f *StdioFilter) WriteOwn(p []byte) error {
	_, err := f.out.write(p)
	return err
}

// Run reads in line by line and writes the lines that pass to to, until in
// ends, to is closed or ctx is done; then it closes to, with in's error if
// any. A Read blocked on in cannot be interrupted: run returns once it does.
func (f *StdioFilter) Run(ctx context.Context, in io.Reader, to *io.PipeWriter) {
	r := bufio.NewReaderSize(in, 64<<10)
	var buf []byte
	for ctx.Err() == nil {
		line, tooLong, err := readLine(r, f.maxLine, buf[:0])
		if len(line) > 0 || tooLong {
			if werr := f.handle(line, tooLong, to); werr != nil {
				to.CloseWithError(werr)
				return
			}
		}
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			to.CloseWithError(err)
			return
		}
		buf = line
		if cap(buf) > 1<<20 {
			buf = nil // do not keep a large line's buffer for good
		}
	}
	to.CloseWithError(ctx.Err())
}

// readLine reads one line into buf, without its limit: a longer line is
// read to its end and reported tooLong, keeping nothing.
func readLine(r *bufio.Reader, limit int, buf []byte) (line []byte, tooLong bool, err error) {
	for {
		chunk, err := r.ReadSlice('\n')
		switch {
		case tooLong:
		case len(buf)+len(bytes.TrimSuffix(chunk, []byte("\n"))) > limit:
			tooLong, buf = true, buf[:0]
		default:
			buf = append(buf, chunk...)
		}
		if err != bufio.ErrBufferFull {
			return buf, tooLong, err
		}
	}
}

// handle pre-checks one line; the error is to's.
func (f *StdioFilter) handle(line []byte, tooLong bool, to io.Writer) error {
	var v verdict
	if tooLong {
		v = refusal(mcp.INVALID_REQUEST, nil, "message larger than %d bytes", f.maxLine)
	} else if v = precheck(line); v.pass() {
		v = f.life.admit(v)
	}
	switch {
	case v.drop:
		f.log.Debug("client message dropped", "transport", "stdio", "reason", LogSafe(v.reason))
	case !v.pass():
		f.log.Debug("client message refused", "transport", "stdio", "code", v.code, "reason", LogSafe(v.reason))
		if _, err := f.out.write(append(v.reply(), '\n')); err != nil {
			f.log.Debug("refusal not sent", "transport", "stdio", "err", err)
		}
	default:
		line = sanitizeUTF8(line)
		if line[len(line)-1] != '\n' { // the last line of the input
			line = append(line, '\n')
		}
		_, err := to.Write(line)
		return err
	}
	return nil
}

// stdioOut is what mcp-go's StdioServer writes to. mcp-go writes each
// message with one Write, from several goroutines, and not all of them
// under its own lock (its sampling, elicitation and roots requests are
// not): stdioOut serialises the Writes, so that the filter's refusals and
// mcp-go's messages never interleave, and shows each to the handshake
// until initialize is answered.
type stdioOut struct {
	life *handshake

	mu sync.Mutex
	w  io.Writer
}

func (o *stdioOut) Write(p []byte) (int, error) {
	o.life.sawOutput(p)
	return o.write(p)
}

// write writes one whole message of the proxy's own.
func (o *stdioOut) write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.w.Write(p)
}

// Handshake states of a stdio connection.
const (
	handshakeFresh = iota // no initialize yet, or the last one failed
	handshakeInit         // initialize handed on, not yet answered
	handshakeReady        // initialize answered with a result
)

// handshake is a stdio connection's handshake state (BI-10 in docs/reliability.md).
type handshake struct {
	mu     sync.Mutex
	state  int
	initID string // requestKey of the initialize being served
}

// admit applies the handshake to a message that passed the pre-check.
func (l *handshake) admit(v verdict) verdict {
	env := v.env
	if env.method == nil {
		return v // a response
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if env.id == nil {
		if l.state == handshakeInit && methodIs(env.method, string(mcp.MethodNotificationCancelled)) {
			// "The initialize request MUST NOT be cancelled by clients."
			if id, _ := cancelledID(env.params); requestKey(id) == l.initID {
				return dropMsg(env, "notifications/cancelled for initialize")
			}
		}
		return v
	}
	id, _ := validID(env.id)
	switch {
	case methodIs(env.method, string(mcp.MethodInitialize)):
		if l.state != handshakeFresh {
			return refusal(mcp.INVALID_REQUEST, id, "initialize was already sent on this connection")
		}
		l.state, l.initID = handshakeInit, requestKey(env.id)
	case l.state == handshakeReady:
	case declaresStateless(env.params): // the 2026-07-28 protocol has no handshake
	case methodIs(env.method, string(mcp.MethodPing)):
		if l.state == handshakeInit && requestKey(env.id) == l.initID {
			return refusal(mcp.INVALID_REQUEST, id, "id %s is used by initialize, which is not answered yet", id)
		}
	default:
		return refusal(mcp.INVALID_REQUEST, id, "%q before initialize was answered: only ping is allowed until then",
			methodName(env.method))
	}
	return v
}

// declaresStateless reports whether a request's params declare, in _meta,
// a protocol version of the stateless era (2026-07-28 or later). Plainly
// written params are read by the scanner without allocating; others are
// decoded by encoding/json.
func declaresStateless(params json.RawMessage) bool {
	if len(params) == 0 || params[0] != '{' {
		return declaresStatelessSlow(params)
	}
	meta, unsure, err := scanMember(params, "_meta")
	if err != nil || unsure {
		return declaresStatelessSlow(params)
	}
	if len(meta) == 0 || meta[0] != '{' {
		return false // absent, null, or not an object: no version declared
	}
	v, unsure, err := scanMember(meta, mcp.MetaKeyProtocolVersion)
	switch {
	case err != nil || unsure || (len(v) > 0 && v[0] == '"' && !plainString(v[1:len(v)-1])):
		return declaresStatelessSlow(params)
	case len(v) == 0 || v[0] != '"':
		return false // absent, or not a string
	}
	return mcp.IsModernProtocol(string(v[1 : len(v)-1]))
}

// declaresStatelessSlow is declaresStateless by encoding/json.
func declaresStatelessSlow(params json.RawMessage) bool {
	var p struct {
		Meta map[string]any `json:"_meta"`
	}
	if len(params) == 0 || json.Unmarshal(params, &p) != nil {
		return false
	}
	v, _ := p.Meta[mcp.MetaKeyProtocolVersion].(string)
	return mcp.IsModernProtocol(v)
}

// sawOutput moves the handshake on when p is the answer to initialize: a
// result makes the connection ready, an error lets the client try again.
func (l *handshake) sawOutput(p []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.state != handshakeInit {
		return
	}
	sc, err := scanJSON(p)
	if err != nil || sc.top != '{' {
		return
	}
	env, err := envelopeOf(&sc)
	if err != nil || env.method != nil || requestKey(env.id) != l.initID {
		return
	}
	switch {
	case env.result != nil:
		l.state = handshakeReady
	case env.error != nil:
		l.state, l.initID = handshakeFresh, ""
	}
}
