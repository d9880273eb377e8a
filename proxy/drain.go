package proxy

import (
	"context"
	"net/http"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcp-router/mcp-router/proxy/internal/wire"
)

// drain ends the HTTP work in flight when the gateway shuts down
// (CancelCalls), apart from the requests' own contexts, which end only when
// their clients go away. mcp-go writes no answer once a request's context
// has ended, so a tools/call runs under its request's context and only the
// call is cancelled (upstream too): its answer, the "cancelled" result a
// stdio client gets, still reaches the client. Every other request (an
// event stream, a subscriptions/listen stream, a read) ends at shutdown
// as its context does.
type drain struct {
	mu     sync.Mutex
	closed bool
	next   uint64
	work   map[uint64]context.CancelFunc
}

// bind returns ctx, cancelled at shutdown too, and the id that release
// takes once the work is done.
func (d *drain) bind(ctx context.Context) (context.Context, uint64) {
	ctx, cancel := context.WithCancel(ctx)
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		cancel()
		return ctx, 0
	}
	d.next++ // from 1: 0 binds nothing
	if d.work == nil {
		d.work = map[uint64]context.CancelFunc{}
	}
	d.work[d.next] = cancel
	return ctx, d.next
}

// release cancels and forgets the context bind returned with id.
func (d *drain) release(id uint64) {
	d.mu.Lock()
	cancel := d.work[id]
	delete(d.work, id)
	d.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// close cancels the work bound so far, and any bound later at once.
func (d *drain) close() {
	d.mu.Lock()
	work := d.work
	d.work, d.closed = nil, true
	d.mu.Unlock()
	for _, cancel := range work {
		cancel()
	}
}

// drainHTTP binds each request but a tools/call to the drain; it runs
// after the pre-check, which read the method.
type drainHTTP struct {
	next  http.Handler
	drain *drain
}

func (h drainHTTP) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost {
		if b, ok := r.Body.(*wire.Body); ok && b.Is(string(mcp.MethodToolsCall)) {
			h.next.ServeHTTP(w, r)
			return
		}
	}
	ctx, id := h.drain.bind(r.Context())
	defer h.drain.release(id)
	h.next.ServeHTTP(w, r.WithContext(ctx))
}

// drainCalls binds each tool call of an HTTP client to the drain when
// there are no graces (a disconnect cancels at once); the graces'
// middleware binds those it does not detach itself.
func (s *Server) drainCalls(next server.ToolHandlerFunc) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if !isHTTPSession(ctx) {
			return next(ctx, req)
		}
		return s.drain.call(ctx, req, next)
	}
}

// call runs next under ctx bound to the drain.
func (d *drain) call(ctx context.Context, req mcp.CallToolRequest, next server.ToolHandlerFunc) (*mcp.CallToolResult, error) {
	ctx, id := d.bind(ctx)
	defer d.release(id)
	return next(ctx, req)
}
