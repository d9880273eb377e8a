package proxy

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// DefaultDisconnectGrace is how long a call goes on after its streamable
// HTTP client drops the response stream without cancelling it.
const DefaultDisconnectGrace = 30 * time.Second

// graces lets the tool calls of streamable HTTP sessions outlive their
// response streams for a grace period (FI-19 in docs/reliability.md).
//
// mcp-go runs a tools/call handler under its POST's context, with a cancel
// on top that a notifications/cancelled fires. The hooks tell the two
// apart: OnRequestInitialization sees the POST's context, keyed by session
// and request id (inflightKey), BeforeCallTool the handler's. The
// middleware runs the handler detached, and when the handler's context
// ends, a stream still open means the client cancelled (cancel at once),
// one gone means it disconnected (cancel after the grace period). Ending
// the session cancels its calls at once. A cancel sent after the stream
// dropped (as the Go SDK does) reaches the HTTP pre-check, which calls
// cancelled.
type graces struct {
	grace  time.Duration // > 0: graces with no grace are never built
	logger *slog.Logger
	drain  *drain // cancels at shutdown the calls not detached (CancelCalls cancels the others)

	mu       sync.Mutex
	posts    map[callKey]context.Context     // the POST's context, until the handler runs
	handlers map[<-chan struct{}]pendingCall // handler context's Done -> its call
	calls    map[callKey]*graceCall          // the call, while it runs
}

// pendingCall is a call between BeforeCallTool and its handler.
type pendingCall struct {
	key  callKey
	post context.Context
}

func newGraces(grace time.Duration, logger *slog.Logger) *graces {
	return &graces{grace: grace, logger: logger, posts: map[callKey]context.Context{},
		handlers: map[<-chan struct{}]pendingCall{}, calls: map[callKey]*graceCall{}}
}

// posted notes the POST of a tools/call that the in-flight id check
// admitted under key. A stateless request's call is not noted: it runs
// under its POST's context, undetached.
func (g *graces) posted(ctx context.Context, key callKey) {
	if isHTTPSession(ctx) && !perRequestSession(ctx) {
		g.mu.Lock()
		g.posts[key] = ctx
		g.mu.Unlock()
	}
}

// hook watches the tools/call requests posted. Calls of other sessions
// pass without the key or the lock.
func (g *graces) hook(hooks *server.Hooks) {
	hooks.AddBeforeCallTool(func(ctx context.Context, id any, _ *mcp.CallToolRequest) {
		if !isHTTPSession(ctx) {
			return
		}
		key := inflightKey(ctx, id)
		g.mu.Lock()
		defer g.mu.Unlock()
		if post, ok := g.posts[key]; ok {
			delete(g.posts, key)
			g.handlers[ctx.Done()] = pendingCall{key: key, post: post}
		}
	})
	forget := func(ctx context.Context, id any) {
		if !isHTTPSession(ctx) {
			return
		}
		g.mu.Lock()
		delete(g.posts, inflightKey(ctx, id))
		delete(g.handlers, ctx.Done())
		g.mu.Unlock()
	}
	hooks.AddAfterCallTool(func(ctx context.Context, id any, _ *mcp.CallToolRequest, _ any) { forget(ctx, id) })
	hooks.AddOnError(func(ctx context.Context, id any, method mcp.MCPMethod, _ any, _ error) {
		if method == mcp.MethodToolsCall {
			forget(ctx, id)
		}
	})
	hooks.AddOnUnregisterSession(func(_ context.Context, cs server.ClientSession) { g.endSession(cs.SessionID()) })
}

func isHTTPSession(ctx context.Context) bool {
	_, ok := server.ClientSessionFromContext(ctx).(server.SessionWithStreamableHTTPConfig)
	return ok
}

// middleware runs each tool handler of a streamable HTTP session under a
// detached context, as described on graces.
func (g *graces) middleware(next server.ToolHandlerFunc) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if !isHTTPSession(ctx) {
			return next(ctx, req)
		}
		g.mu.Lock()
		p, ok := g.handlers[ctx.Done()]
		delete(g.handlers, ctx.Done())
		g.mu.Unlock()
		if !ok { // not detached (stateless): the drain cancels it at shutdown
			return g.drain.call(ctx, req, next)
		}
		callCtx, end := g.start(ctx, p, req.Params.Name)
		defer end()
		return next(callCtx, req)
	}
}

// graceCall is one call running detached from its handler's context.
type graceCall struct {
	cancel context.CancelFunc

	mu    sync.Mutex
	timer *time.Timer // the grace period, once the stream is gone
	ended bool
}

// start detaches a call from handler, the context mcp-go gave it, and
// returns the call's context and the func that ends it.
func (g *graces) start(handler context.Context, p pendingCall, tool string) (context.Context, func()) {
	callCtx, cancel := context.WithCancel(withStream(context.WithoutCancel(handler), p.post))
	c := &graceCall{cancel: cancel}
	g.mu.Lock()
	g.calls[p.key] = c
	g.mu.Unlock()
	stop := context.AfterFunc(handler, func() {
		if p.post.Err() == nil { // the client sent notifications/cancelled
			cancel()
			return
		}
		g.logger.Debug("client dropped the stream of a call", "session_id", sessionTagOf(handler), "tool", tool, "grace", g.grace)
		c.mu.Lock()
		if !c.ended {
			c.timer = time.AfterFunc(g.grace, cancel)
		}
		c.mu.Unlock()
	})
	return callCtx, func() {
		stop()
		c.mu.Lock()
		c.ended = true
		if c.timer != nil {
			c.timer.Stop()
		}
		c.mu.Unlock()
		cancel()
		g.mu.Lock()
		if g.calls[p.key] == c {
			delete(g.calls, p.key)
		}
		g.mu.Unlock()
	}
}

func (g *graces) cancelCall(key callKey) {
	g.mu.Lock()
	c := g.calls[key]
	g.mu.Unlock()
	if c != nil {
		c.cancel()
	}
}

// endSession cancels the calls of a session that ended.
func (g *graces) endSession(id string) {
	var calls []*graceCall
	g.mu.Lock()
	for key, c := range g.calls {
		if key.session == id {
			calls = append(calls, c)
			delete(g.calls, key)
		}
	}
	for key := range g.posts {
		if key.session == id {
			delete(g.posts, key)
		}
	}
	g.mu.Unlock()
	for _, c := range calls {
		c.cancel()
	}
}

func (g *graces) close() {
	g.mu.Lock()
	calls := g.calls
	g.calls = map[callKey]*graceCall{}
	g.mu.Unlock()
	for _, c := range calls {
		c.cancel()
	}
}

// cancelled cancels at once the call a client's notifications/cancelled
// names, whether or not its stream is still open; the HTTP pre-check calls
// it with the id as sent. On a nil *graces it does nothing.
func (g *graces) cancelled(session string, requestID json.RawMessage) {
	var id any // decoded as mcp-go decodes ids, so the key is inflightKey's
	if g == nil || session == "" || json.Unmarshal(requestID, &id) != nil {
		return
	}
	g.cancelCall(callKey{session, idText(id)})
}

// streamKey holds the context of the POST whose stream carries a call
// (mcp-go's tool middleware hands a handler only a context).
type streamKey struct{}

func withStream(ctx, post context.Context) context.Context {
	return context.WithValue(ctx, streamKey{}, post)
}

// streamGone reports whether the client of ctx's call dropped the stream
// its answer would go on.
func streamGone(ctx context.Context) bool {
	if post, ok := ctx.Value(streamKey{}).(context.Context); ok {
		return post.Err() != nil
	}
	return ctx.Err() != nil
}

// hookCalls sets up the disconnect grace period and the rate limit.
func (s *Server) hookCalls(opts ServerOptions, hooks *server.Hooks) {
	grace := opts.DisconnectGrace
	if grace == 0 {
		grace = DefaultDisconnectGrace
	}
	if grace > 0 {
		s.graces = newGraces(grace, opts.Logger)
		s.graces.drain = &s.drain
		s.graces.hook(hooks)
	}
	if s.limits = newRateLimits(opts.RateLimit); s.limits != nil {
		s.limits.hook(hooks)
	}
}

// useCallMiddleware wraps every tool handler, the rate limit first so that
// a refused call is never detached, and binds each to the drain.
func (s *Server) useCallMiddleware() {
	if s.hub.opts.Tracing != nil {
		s.mcp.Use(s.traceCalls)
	}
	if s.limits != nil {
		s.mcp.Use(s.limitCalls)
	}
	if s.graces != nil {
		s.mcp.Use(s.graces.middleware)
	} else {
		s.mcp.Use(s.drainCalls)
	}
}
