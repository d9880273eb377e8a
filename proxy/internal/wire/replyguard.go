package wire

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"sync/atomic"
)

// The streamable-HTTP checks (FI-02, FI-10): mcp-go reports a garbage reply
// as a transport error (a dead upstream), skips an SSE event that is not
// JSON (the call ends with "unexpected nil response"), and dispatches the
// unfinished event of a broken stream (a partial result). ReplyGuard checks
// each reply before mcp-go reads it: a broken one fails the read, its
// reason kept in the call's ReplyCheck, so the call fails as
// upstream_protocol_error and the connection is kept.

// ReplyCheck keeps the first reason a call's reply was refused.
type ReplyCheck struct {
	err    atomic.Pointer[error]
	posted atomic.Pointer[string] // the id key of the request the call posts first (Posts)
}

type replyCheckKey struct{}

// WithReplyCheck returns ctx carrying a new ReplyCheck for one call.
func WithReplyCheck(ctx context.Context) (context.Context, *ReplyCheck) {
	c := &ReplyCheck{}
	return context.WithValue(ctx, replyCheckKey{}, c), c
}

func replyCheckFrom(ctx context.Context) *ReplyCheck {
	c, _ := ctx.Value(replyCheckKey{}).(*ReplyCheck)
	return c
}

// Posts tells the check of ctx's call, if any, that the first request the
// call posts has the string id id, which spares ReplyGuard reading the
// request's body back to learn it.
func Posts(ctx context.Context, id string) {
	if c := replyCheckFrom(ctx); c != nil && plainString([]byte(id)) {
		key := "string:" + id // as idKey has it
		c.posted.Store(&key)
	}
}

// fail keeps err unless a reason is kept already, and returns it.
func (c *ReplyCheck) fail(err error) error {
	if c != nil {
		c.err.CompareAndSwap(nil, &err)
	}
	return err
}

// Problem is the reason kept, or nil.
func (c *ReplyCheck) Problem() error {
	if c == nil || c.err.Load() == nil {
		return nil
	}
	return *c.err.Load()
}

// ReplyGuard checks the replies of a streamable-HTTP upstream.
type ReplyGuard struct {
	Next http.RoundTripper
	Max  int // bytes in one JSON reply or one SSE event
	// Report logs and counts one refused reply; it must not block.
	Report func(error)
}

// RoundTrip checks a 200 reply to a POSTed JSON-RPC request.
func (g *ReplyGuard) RoundTrip(req *http.Request) (*http.Response, error) {
	want, isRequest := postedID(req)
	resp, err := g.Next.RoundTrip(req)
	if err != nil || !isRequest || resp.StatusCode != http.StatusOK {
		return resp, err
	}
	r := &reply{check: replyCheckFrom(req.Context()), report: g.Report, want: want, max: g.Max}
	media, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch media {
	case "application/json":
		resp.Body = &jsonReply{reply: r, body: resp.Body}
	case "text/event-stream":
		resp.Body = &sseReply{reply: r, body: resp.Body, r: bufio.NewReader(resp.Body)}
	default:
		// mcp-go refuses it as a transport error; the check says why.
		r.refuse(fmt.Errorf("%w: a reply of content type %q", ErrProtocol, media))
	}
	return resp, nil
}

// postedID is the id key of the request req POSTs, as Posts told it for
// the call's first, else as postedRequest reads it.
func postedID(req *http.Request) (want string, ok bool) {
	if c := replyCheckFrom(req.Context()); c != nil && req.Method == http.MethodPost {
		if key := c.posted.Swap(nil); key != nil {
			return *key, true
		}
	}
	return postedRequest(req)
}

// postedRequest gives the id key of the JSON-RPC request req POSTs; a
// notification or a response gets no reply to check.
func postedRequest(req *http.Request) (want string, ok bool) {
	if req.Method != http.MethodPost || req.GetBody == nil {
		return "", false
	}
	body, err := req.GetBody()
	if err != nil {
		return "", false
	}
	defer body.Close()
	// One message, in memory: the scanner reads it, or encoding/json as it
	// reads the first value of a stream.
	data, err := io.ReadAll(body)
	if err != nil {
		return "", false
	}
	m, ok := parseMessageFast(data)
	if !ok && json.NewDecoder(bytes.NewReader(data)).Decode(&m) != nil {
		return "", false
	}
	if !m.isCall() {
		return "", false
	}
	want = idKey(m.ID)
	return want, want != ""
}

// reply is what both kinds of reply body need.
type reply struct {
	check  *ReplyCheck
	report func(error)
	want   string
	max    int
}

// refuse keeps and reports why the reply is refused, and returns it.
func (r *reply) refuse(err error) error {
	r.report(err)
	return r.check.fail(err)
}

func (r *reply) tooLarge() error {
	return r.refuse(fmt.Errorf("%w: a reply over %d bytes", ErrMessageTooLarge, r.max))
}

// Guarded reports whether body is bounded by ReplyGuard already.
func Guarded(body io.ReadCloser) bool {
	switch body.(type) {
	case *jsonReply, *sseReply:
		return true
	}
	return false
}

// jsonReply hands on an application/json reply of up to max bytes only if
// it is a well-formed response to the request.
type jsonReply struct {
	*reply
	body io.ReadCloser
	buf  *bytes.Reader // nil until read and checked
	err  error
}

func (j *jsonReply) Read(p []byte) (int, error) {
	if j.buf == nil && j.err == nil {
		j.load()
	}
	if j.err != nil {
		return 0, j.err
	}
	return j.buf.Read(p)
}

func (j *jsonReply) load() {
	data, err := io.ReadAll(io.LimitReader(j.body, int64(j.max)+1))
	switch {
	case err != nil:
		j.err = err // the connection broke: not the upstream's protocol
	case len(data) > j.max:
		j.err = j.tooLarge()
	default:
		if err := vetReply(data, j.want); err != nil {
			j.err = j.refuse(err)
			return
		}
		j.buf = bytes.NewReader(data)
	}
}

func (j *jsonReply) Close() error { return j.body.Close() }

// sseReply hands on a text/event-stream reply line by line, each event
// once checked. A stream that ends inside an event ends with
// io.ErrUnexpectedEOF, so mcp-go drops the unfinished event (FI-02).
type sseReply struct {
	*reply
	body io.ReadCloser
	r    *bufio.Reader
	data []byte // the data of the event being read
	open bool   // a data line since the last blank line
	out  []byte // checked, not yet read
	err  error
}

func (s *sseReply) Read(p []byte) (int, error) {
	for len(s.out) == 0 && s.err == nil {
		s.err = s.next()
	}
	if len(s.out) > 0 {
		n := copy(p, s.out)
		s.out = s.out[n:]
		return n, nil
	}
	return 0, s.err
}

func (s *sseReply) Close() error { return s.body.Close() }

// next reads one line and queues it once checked.
func (s *sseReply) next() error {
	line, err := s.line()
	switch {
	case errors.Is(err, io.EOF) && (s.open || len(line) > 0):
		return io.ErrUnexpectedEOF
	case err != nil:
		return err
	}
	field := bytes.TrimRight(line, "\r\n")
	switch {
	case len(field) == 0:
		if err := s.dispatch(); err != nil {
			return err
		}
	case bytes.HasPrefix(field, []byte("data:")):
		value := bytes.TrimPrefix(field[len("data:"):], []byte(" "))
		if len(s.data) > 0 {
			s.data = append(s.data, '\n')
		}
		if s.data = append(s.data, value...); len(s.data) > s.max {
			return s.tooLarge()
		}
		s.open = true
	}
	s.out = line
	return nil
}

// line reads one line of at most max bytes.
func (s *sseReply) line() ([]byte, error) {
	var line []byte
	for {
		chunk, err := s.r.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > s.max {
			return nil, s.tooLarge()
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return line, err
		}
	}
}

// dispatch checks the event a blank line ends: a JSON-RPC 2.0 message,
// and if a response, the one to this request.
func (s *sseReply) dispatch() error {
	data := s.data
	s.data, s.open = s.data[:0], false
	if len(data) == 0 {
		return nil // no data (a priming event): mcp-go dispatches nothing
	}
	m, err := parseMessage(data)
	if err == nil && !m.isCall() {
		err = m.vetAnswer(s.want)
	}
	if err != nil {
		return s.refuse(err)
	}
	return nil
}
