package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-router/mcp-router/proxy/call"
	"github.com/mcp-router/mcp-router/proxy/internal/wire"
)

// MaxStdioRequests bounds a stdio client's requests other than tools/call
// in progress at once (lists, reads, pings, subscriptions/listen); past
// it the client's next line is read when one of them ends.
const MaxStdioRequests = 100

// ServeStdio serves one client over in and out until in ends or ctx is
// done; then it cancels the requests in progress and returns once their
// handlers have. Nothing but JSON-RPC is written to out.
//
// A client that stops reading out without closing it (it closed in and
// went on to something else, say) would hold that return forever, the
// writes blocked on a full pipe. So once ServeStdio is ending, what is
// still being written has stdioWriteGrace to go; then out is cut: a Write
// after that fails at once, and one blocked fails too when out takes a
// write deadline (a pipe, a connection), which ServeStdio sets. When out
// takes none and a Write is still in progress, ServeStdio returns without
// waiting for it or for the handlers still running: the writer, and the
// goroutines waiting behind it, end when that Write returns, writing
// nothing more.
//
// One goroutine reads in: it pre-checks each line (wire.StdioFilter),
// admits tools/call ids in the order the calls came (stdioCalls), hands
// each reply of the client to the request of the proxy's it answers,
// serves notifications itself, in order, and hands requests on: a call
// to one of ServerOptions.StdioCalls workers, or up to StdioQueue calls
// waiting for one, past which the call is refused (queue_full); another
// request to a goroutine of its own, at most
// MaxStdioRequests at once. When ctx ends while a Read on in is blocked,
// ServeStdio sets a read deadline on in when in has one (a pipe, a
// connection); otherwise it returns without waiting for that Read, and
// the reader ends, serving nothing more, when the Read returns.
func (s *Server) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	in, closeIn := wire.Pollable(in) // a pipe read in the poller: no thread woken per message
	defer closeIn()
	output := &stdioOutput{w: out}
	filter := wire.NewStdioFilter(in, output, s.logger)
	c := &stdioConn{s: s, out: filter.Out(), calls: newStdioCalls(filter.WriteOwn, s.logger),
		queue: make(chan stdioWork, s.stdioCalls+StdioQueue), admitted: make(chan struct{}, s.stdioCalls+StdioQueue),
		others: make(chan struct{}, MaxStdioRequests)}
	c.sess = newStdioSession(c.send)
	if err := s.mcp.RegisterSession(ctx, c.sess); err != nil {
		return fmt.Errorf("registering the stdio session: %w", err)
	}
	defer s.mcp.UnregisterSession(ctx, c.sess.SessionID())
	ctx, cancel := context.WithCancel(s.mcp.WithContext(ctx, c.sess))
	defer cancel()
	c.sess.lists = newListGate(func(method string) uint64 { return s.listFingerprint(ctx, method) })

	var workers sync.WaitGroup
	for range s.stdioCalls {
		workers.Go(func() { c.work(ctx) })
	}
	workers.Go(func() {
		c.sess.relay(ctx, func(err error) { s.logger.Warn("notification not sent", "transport", "stdio", "err", err) })
	})
	read := make(chan error, 1)
	go func() { read <- c.read(ctx, filter) }() // waited for below, unless a Read blocks for good
	var err error
	readEnding := false // a read deadline ends the reader's Read
	select {
	case err = <-read:
	case <-ctx.Done():
		err = ctx.Err()
		d, ok := in.(interface{ SetReadDeadline(time.Time) error })
		readEnding = ok && d.SetReadDeadline(time.Now()) == nil
	}
	c.close()
	cancel()
	ended := make(chan struct{})
	go func() { // waited for below, unless a Write blocks for good
		defer close(ended)
		if readEnding {
			<-read
		}
		workers.Wait()
		c.handlers.Wait()
	}()
	c.drain(ended, output)
	if errors.Is(err, io.EOF) || errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// stdioWriteGrace is how long an ending ServeStdio lets the client take
// the messages still being written before it cuts the output. A client
// that reads takes them in far less; one that stopped reading never does.
const stdioWriteGrace = 2 * time.Second

// drain waits until ended is closed: at once while the client takes what
// is written, and at most stdioWriteGrace for a Write blocked on it; out
// is cut then, and ended waited for unless a Write may still block.
func (c *stdioConn) drain(ended <-chan struct{}, out *stdioOutput) {
	grace := time.NewTimer(stdioWriteGrace)
	defer grace.Stop()
	select {
	case <-ended:
		return
	case <-grace.C:
	}
	if out.cut() {
		<-ended
		return
	}
	c.s.logger.Warn("stdio output not read: returning with a write blocked", "grace", stdioWriteGrace)
}

// errOutputCut is the error of a Write to a stdio client after ServeStdio
// cut its output.
var errOutputCut = errors.New("stdio output cut: the client did not read it in time")

// stdioOutput is the writer a stdio client reads, which an ending
// ServeStdio can cut.
type stdioOutput struct {
	w       io.Writer
	cutOff  atomic.Bool  // a Write fails at once
	writing atomic.Int32 // Writes in progress
}

func (o *stdioOutput) Write(p []byte) (int, error) {
	o.writing.Add(1)
	defer o.writing.Add(-1)
	if o.cutOff.Load() {
		return 0, errOutputCut
	}
	return o.w.Write(p)
}

// cut makes every Write from now on fail, sets a write deadline of now
// on the writer when it takes one, and reports whether no Write can
// block any more: the deadline was set (it fails one in progress), or
// none was in progress.
func (o *stdioOutput) cut() bool {
	o.cutOff.Store(true) // before writing is read: a Write that began later sees it
	if d, ok := o.w.(interface{ SetWriteDeadline(time.Time) error }); ok && d.SetWriteDeadline(time.Now()) == nil {
		return true
	}
	return o.writing.Load() == 0
}

// stdioConn is one stdio client's connection, as ServeStdio serves it.
type stdioConn struct {
	s        *Server
	out      io.Writer // filter.Out(): one whole message per Write
	sess     *stdioSession
	calls    *stdioCalls
	queue    chan stdioWork // calls waiting for a worker
	admitted chan struct{}  // a token per call running or waiting
	others   chan struct{}  // a token per other request in progress
	bufs     sync.Pool      // of *replyBuf

	mu       sync.Mutex
	closed   bool                          // no handler starts any more
	handlers sync.WaitGroup                // the handlers started outside the workers
	fast     map[string]context.CancelFunc // the calls on the fast path, by id key
}

// stdioWork is one request or notification to serve.
type stdioWork struct {
	m    wire.Message
	call string // the key of a tools/call's id, freed when it ends; "" for another message
}

// read reads the client's messages and hands each on until in ends or
// the connection closes.
func (c *stdioConn) read(ctx context.Context, filter *wire.StdioFilter) error {
	for {
		m, err := filter.Next()
		if err != nil {
			return err
		}
		if !c.dispatch(ctx, m) {
			return ctx.Err()
		}
	}
}

// dispatch hands one message on; false when the connection is closed.
func (c *stdioConn) dispatch(ctx context.Context, m wire.Message) bool {
	switch {
	case m.IsResponse():
		if !c.sess.deliver(m.ID(), m.Line) {
			c.s.logger.Debug("client reply dropped", "transport", "stdio", "reason", "it answers no request in progress")
		}
		return true
	case m.IsNotification():
		c.cancelFast(m)
		return c.inline(ctx, stdioWork{m: m})
	case m.IsMethod(string(mcp.MethodToolsCall)):
		key, ok := c.calls.admit(m)
		if !ok {
			return true // refused
		}
		return c.call(ctx, stdioWork{m: m, call: key})
	}
	return c.other(ctx, stdioWork{m: m})
}

// call queues a tools/call for the workers, or refuses it when StdioQueue
// calls wait already. The reader never serves a call itself: a call that
// asks the client something mid-call (sampling, elicitation) would wait
// for a reply that only the reader reads, and the connection would stall
// until the call's deadline.
func (c *stdioConn) call(ctx context.Context, w stdioWork) bool {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return false
	}
	select {
	case c.admitted <- struct{}{}:
		c.queue <- w // never blocks: it holds as many as there are tokens
		c.mu.Unlock()
		return true
	default:
	}
	c.mu.Unlock()
	c.calls.done(w.call)
	c.s.logger.Warn("stdio calls queue full: call refused", "running", c.s.stdioCalls, "waiting", StdioQueue)
	if err := c.send(queueFullReply(w.m, c.s.stdioCalls)); err != nil {
		c.s.logger.Warn("reply not sent", "transport", "stdio", "err", err)
	}
	return true
}

// queueFullReply is the answer to a tools/call refused because the
// client's calls fill every worker and the queue: an isError result of
// kind queue_full, as an upstream's full queue gives.
func queueFullReply(m wire.Message, running int) any {
	var req struct {
		Params struct {
			Name string `json:"name"`
		} `json:"params"`
	}
	_ = json.Unmarshal(m.Line, &req) // the pre-check let it through; a name is only for the text
	err := &UpstreamError{Kind: KindQueueFull, Tool: call.ClipName(req.Params.Name),
		Err: fmt.Errorf("%w: this client has %d calls running and %d waiting; retry when one ends", ErrQueueFull, running, StdioQueue)}
	return struct {
		JSONRPC string              `json:"jsonrpc"`
		ID      json.RawMessage     `json:"id"`
		Result  *mcp.CallToolResult `json:"result"`
	}{mcp.JSONRPC_VERSION, m.ID(), errorResult(err)}
}

// other serves a request other than tools/call on a goroutine of its own,
// once fewer than MaxStdioRequests are in progress.
func (c *stdioConn) other(ctx context.Context, w stdioWork) bool {
	select {
	case c.others <- struct{}{}:
	case <-ctx.Done():
		return false
	}
	if !c.enter() {
		<-c.others
		return false
	}
	go func() {
		defer c.handlers.Done()
		defer func() { <-c.others }()
		c.serve(ctx, w)
	}()
	return true
}

// inline serves a notification before the next line is read, so that
// notifications take effect in the order they came.
func (c *stdioConn) inline(ctx context.Context, w stdioWork) bool {
	if !c.enter() {
		return false
	}
	defer c.handlers.Done()
	c.serve(ctx, w)
	return true
}

// enter counts a handler about to start, unless the connection is closed.
func (c *stdioConn) enter() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return false
	}
	c.handlers.Add(1)
	return true
}

// close stops handlers from starting; those started go on.
func (c *stdioConn) close() {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
}

// work serves queued calls until ctx ends; calls still queued then are
// not served.
func (c *stdioConn) work(ctx context.Context) {
	for {
		select {
		case w := <-c.queue:
			c.serve(ctx, w)
			<-c.admitted
		case <-ctx.Done():
			return
		}
	}
}

// serve handles one message and writes the reply, if any.
func (c *stdioConn) serve(ctx context.Context, w stdioWork) {
	reply := c.handle(ctx, w)
	if w.call != "" {
		c.calls.done(w.call) // before the reply: the client may reuse the id once it has it
	}
	if reply == nil {
		return
	}
	if err := c.send(reply); err != nil {
		c.s.logger.Warn("reply not sent", "transport", "stdio", "err", err)
	}
}

// handle answers a tools/call on the fast path (fastCall) and has mcp-go
// handle any other message. A handler's panic is recovered: a request
// gets an INTERNAL_ERROR reply with its id.
func (c *stdioConn) handle(ctx context.Context, w stdioWork) (reply mcp.JSONRPCMessage) {
	m := w.m
	defer func() {
		p := recover()
		if p == nil {
			return
		}
		c.s.logger.Error("handler panicked", "transport", "stdio", "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
		if m.IsNotification() {
			reply = nil
			return
		}
		reply = struct {
			JSONRPC string                  `json:"jsonrpc"`
			ID      json.RawMessage         `json:"id"`
			Error   mcp.JSONRPCErrorDetails `json:"error"`
		}{mcp.JSONRPC_VERSION, m.ID(), mcp.JSONRPCErrorDetails{Code: mcp.INTERNAL_ERROR, Message: fmt.Sprintf("internal panic: %v", p)}}
	}()
	if reply, ok := c.fastCall(ctx, m, w.call); ok {
		return reply
	}
	return c.s.mcp.HandleMessage(ctx, m.Line)
}

// replyBuf is a buffer a message is encoded into before its one Write.
type replyBuf struct {
	bytes.Buffer
	enc *json.Encoder
}

// maxKeptReplyBuf is the largest buffer kept for the next message.
const maxKeptReplyBuf = 64 << 10

// send encodes msg, as encoding/json marshals it, and writes it with its
// newline in one Write. The reply to a tools/call is written by
// appendCallReply, the same bytes for less work.
func (c *stdioConn) send(msg any) error {
	b, _ := c.bufs.Get().(*replyBuf)
	if b == nil {
		b = &replyBuf{}
		b.enc = json.NewEncoder(&b.Buffer)
	}
	b.Reset()
	var err error
	if line, ok := appendCallReply(b.AvailableBuffer(), msg); ok {
		b.Write(line)
	} else {
		err = b.enc.Encode(msg) // with its newline
	}
	if err == nil {
		_, err = c.out.Write(b.Bytes())
	}
	if b.Cap() <= maxKeptReplyBuf {
		c.bufs.Put(b)
	}
	return err
}
