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
	"github.com/mcp-router/mcp-router/proxy/internal/upstream"
	"github.com/mcp-router/mcp-router/proxy/internal/wire"
)

// MaxStdioRequests bounds a stdio client's requests other than tools/call
// in progress at once; past it the next line is read when one ends.
const MaxStdioRequests = 100

// ServeStdio serves one client over in and out until in ends or ctx is
// done, then cancels the requests in progress and returns once their
// handlers have. Nothing but JSON-RPC is written to out.
//
// One goroutine reads in: it pre-checks each line, admits tools/call ids
// in order (stdioCalls), hands the client's replies to the requests they
// answer, serves notifications itself, in order, and hands a call to one
// of StdioCalls workers (or up to StdioQueue waiting, else queue_full) and
// another request to a goroutine of its own (at most MaxStdioRequests).
//
// A client that stops reading out, or a Read on in that never returns,
// must not hold the return forever: an ending ServeStdio sets deadlines
// where in and out take them, cuts out after stdioWriteGrace, and
// otherwise returns without waiting for the blocked Read or Write.
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
// what is still being written before it cuts the output.
const stdioWriteGrace = 2 * time.Second

// drain waits until ended is closed, at most stdioWriteGrace for a Write
// blocked on the client; then it cuts out, and waits on unless a Write
// may still block.
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

// errOutputCut fails a Write after ServeStdio cut the output.
var errOutputCut = errors.New("stdio output cut: the client did not read it in time")

// stdioOutput is the writer a stdio client reads, which ServeStdio can cut.
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
// when the writer takes one, and reports whether no Write can block any
// more.
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

// read hands on the client's messages until in ends or the connection
// closes.
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
// asks the client something mid-call would wait for a reply only the
// reader reads.
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

// queueFullReply is the queue_full isError result of a tools/call refused
// because the client's calls fill every worker and the queue.
func queueFullReply(m wire.Message, running int) any {
	var req struct {
		Params struct {
			Name string `json:"name"`
		} `json:"params"`
	}
	_ = json.Unmarshal(m.Line, &req) // the pre-check let it through; a name is only for the text
	err := &UpstreamError{Kind: call.KindQueueFull, Tool: call.ClipName(req.Params.Name),
		Err: fmt.Errorf("%w: this client has %d calls running and %d waiting; retry when one ends", upstream.ErrQueueFull, running, StdioQueue)}
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
// notifications take effect in order.
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

// work serves queued calls until ctx ends.
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
// handle any other message. A panic becomes an INTERNAL_ERROR reply.
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

// send writes msg, as encoding/json marshals it, with its newline in one
// Write (a tools/call reply by appendCallReply: the same bytes).
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
