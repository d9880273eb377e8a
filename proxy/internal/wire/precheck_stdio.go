package wire

// The pre-check over stdio.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
)

// maxStdioMessage bounds one stdio line (FI-12): a longer one is skipped
// to its newline and answered -32600, and the session goes on.
const maxStdioMessage = MaxMessageBytes

// StdioFilter pre-checks each line a stdio client sends, answers or drops
// the bad ones and hands the rest on through Next. It also keeps the
// handshake (BI-10), which mcp-go does not: until initialize is answered
// only ping and initialize are served, and initialize only once; a
// request read after initialize waits for its answer, then is handed on
// (a result) or refused (an error).
type StdioFilter struct {
	in      *bufio.Reader
	out     *stdioOut
	life    *handshake
	log     *slog.Logger
	maxLine int
}

// NewStdioFilter reads the client's lines from in; answers go to out.
func NewStdioFilter(in io.Reader, out io.Writer, log *slog.Logger) *StdioFilter {
	life := &handshake{}
	return &StdioFilter{in: bufio.NewReaderSize(in, 64<<10), out: &stdioOut{life: life, w: out},
		life: life, log: log, maxLine: maxStdioMessage}
}

// Out is where answers to the client are written, each message whole.
func (f *StdioFilter) Out() io.Writer { return f.out }

// WriteOwn writes p, one whole message of the proxy's own, to the client.
func (f *StdioFilter) WriteOwn(p []byte) error {
	_, err := f.out.write(p)
	return err
}

// Message is one message of a stdio client that passed the pre-check.
type Message struct {
	// Line is the message, valid UTF-8, without its newline; never reused.
	Line []byte
	// id and method are the raw tokens as written (nil when absent).
	id, method []byte
}

// ID is the message's id token as written, nil for a notification.
func (m Message) ID() []byte { return m.id }

// IsResponse reports whether m answers a request (it has no method).
func (m Message) IsResponse() bool { return m.method == nil }

// IsNotification reports whether m is a notification (a method, no id).
func (m Message) IsNotification() bool { return m.method != nil && m.id == nil }

// IsMethod reports whether m's method is name.
func (m Message) IsMethod(name string) bool { return methodIs(m.method, name) }

// Next returns the next line that passes the pre-check, answering or
// dropping the others, or in's error once it ends (a last line without a
// newline is a message).
func (f *StdioFilter) Next() (Message, error) {
	for {
		line, tooLong, err := readLine(f.in, f.maxLine, nil)
		if len(line) > 0 || tooLong {
			if m, ok := f.check(line, tooLong); ok {
				return m, nil
			}
		}
		if err != nil {
			return Message{}, err
		}
	}
}

// readLine reads one line, appended to buf; a line over limit is read to
// its end and reported tooLong, keeping nothing.
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

// check returns the message when line passes, and answers or drops it otherwise.
func (f *StdioFilter) check(line []byte, tooLong bool) (Message, bool) {
	var v verdict
	if tooLong {
		v = refusal(mcp.INVALID_REQUEST, nil, "message larger than %d bytes", f.maxLine)
	} else if v = precheck(line); v.pass() {
		first := v
		for v = f.life.admit(first); v.wait != nil; v = f.life.admit(first) {
			<-v.wait // a request sent with initialize waits for its answer
		}
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
		line = bytes.TrimSuffix(line, []byte("\n"))
		return Message{Line: sanitizeUTF8(line), id: v.env.id, method: v.env.method}, true
	}
	return Message{}, false
}

// stdioOut serialises the writes to a stdio client, so that refusals and
// replies never interleave, and shows each to the handshake.
type stdioOut struct {
	life *handshake
	w    io.Writer
	g    groupWriter
}

func (o *stdioOut) Write(p []byte) (int, error) {
	o.life.sawOutput(p)
	return o.write(p)
}

// write writes one whole message of the proxy's own.
func (o *stdioOut) write(p []byte) (int, error) { return o.g.write(o.w, p) }

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
	// answered is closed at the answer to that initialize.
	answered chan struct{}
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
		l.state, l.initID, l.answered = handshakeInit, requestKey(env.id), make(chan struct{})
	case l.state == handshakeReady:
	case declaresStateless(env.params): // the 2026-07-28 protocol has no handshake
	case methodIs(env.method, string(mcp.MethodPing)):
		if l.state == handshakeInit && requestKey(env.id) == l.initID {
			return refusal(mcp.INVALID_REQUEST, id, "id %s is used by initialize, which is not answered yet", id)
		}
	default:
		r := refusal(mcp.INVALID_REQUEST, id, "%q before initialize was answered: only ping is allowed until then",
			methodName(env.method))
		if l.state == handshakeInit {
			r.wait = l.answered // sent after initialize: it is admitted, or not, at initialize's outcome
		}
		return r
	}
	return v
}

// declaresStateless reports whether a request's _meta declares a protocol
// version of the stateless era (2026-07-28 or later).
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

// sawOutput moves the handshake on at the answer to initialize: a result
// makes the connection ready, an error lets the client try again.
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
	default:
		return
	}
	close(l.answered)
}
