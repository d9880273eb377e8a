package proxy

import (
	"context"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"golang.org/x/time/rate"

	"github.com/mcp-router/mcp-router/internal/defaults"
	"github.com/mcp-router/mcp-router/proxy/call"
	"github.com/mcp-router/mcp-router/proxy/metatools"
)

// RateLimit bounds the tool calls of each client session with a token
// bucket (SEC-15); a plan's calls take tokens too. The zero value is no
// limit.
type RateLimit struct {
	// CallsPerSecond is the rate the bucket refills at; 0 is no limit.
	CallsPerSecond float64
	// Burst is the bucket's size: how many calls may come at once
	// [CallsPerSecond rounded up].
	Burst int
}

// RateLimitError is why a call was refused by its session's rate limit.
type RateLimitError struct {
	CallsPerSecond float64
	Burst          int
	// RetryAfter is when the bucket has a token again.
	RetryAfter time.Duration
}

func (e *RateLimitError) Error() string {
	return fmt.Sprintf("this client session is over its limit of %g calls a second (burst %d); retry after %s",
		e.CallsPerSecond, e.Burst, e.RetryAfter)
}

type rateLimits struct {
	limit RateLimit

	mu       sync.Mutex
	sessions map[string]*rate.Limiter
}

// newRateLimits returns the per-session buckets of l, or nil for no limit.
func newRateLimits(l RateLimit) *rateLimits {
	if l.CallsPerSecond <= 0 {
		return nil
	}
	defaults.Set(&l.Burst, max(1, int(math.Ceil(l.CallsPerSecond))))
	return &rateLimits{limit: l, sessions: map[string]*rate.Limiter{}}
}

// hook forgets a session's bucket when the session ends.
func (r *rateLimits) hook(hooks *server.Hooks) {
	hooks.AddOnUnregisterSession(func(_ context.Context, cs server.ClientSession) {
		r.mu.Lock()
		delete(r.sessions, cs.SessionID())
		r.mu.Unlock()
	})
}

// take takes a token from session's bucket, or says how long until there
// is one.
func (r *rateLimits) take(session string) *RateLimitError {
	r.mu.Lock()
	lim, ok := r.sessions[session]
	if !ok {
		lim = rate.NewLimiter(rate.Limit(r.limit.CallsPerSecond), r.limit.Burst)
		r.sessions[session] = lim
	}
	r.mu.Unlock()
	res := lim.Reserve()
	wait := res.Delay()
	if wait == 0 {
		return nil
	}
	res.Cancel() // a refused call takes no token
	return &RateLimitError{CallsPerSecond: r.limit.CallsPerSecond, Burst: r.limit.Burst,
		RetryAfter: wait.Truncate(time.Millisecond) + time.Millisecond} // rounded up
}

// limitKey is what a call's rate limit is kept by: its session, or, on
// the stateless protocol, its credential.
func limitKey(ctx context.Context) string {
	if perRequestSession(ctx) {
		return "stateless\x00" + clientOfCtx(ctx)
	}
	return call.SessionOf(ctx)
}

// rateLimited counts a call of tool against its session's limit: nil when
// it may go ahead, else a rate_limited error.
func (s *Server) rateLimited(ctx context.Context, tool string) error {
	if s.limits == nil {
		return nil
	}
	rl := s.limits.take(limitKey(ctx))
	if rl == nil {
		return nil
	}
	upstream, label := "", tool
	if t, ok := s.hub.Catalog().Tool(tool); ok {
		upstream = t.Upstream
	} else if !metatools.IsOwn(tool) {
		label = otherTool // a made-up name must not take a label of the capped set
	}
	s.metrics.CallDone(upstream, label, 0, string(call.KindRateLimited))
	s.logger.Debug("call over the rate limit", "session_id", sessionTagOf(ctx), "tool", tool, "retry_after", rl.RetryAfter)
	err := &UpstreamError{Kind: call.KindRateLimited, Upstream: upstream, Tool: tool, Err: rl}
	c := call.New(ctx, tool, nil)
	c.Upstream = upstream
	if a := s.hub.opts.Audit; a != nil {
		a.Record(call.AuditRecord(c, time.Now(), nil, err)) // refused before the hub: recorded here
	}
	return err
}

// limitCalls refuses a tools/call over its session's rate limit with an
// isError result; a call_tool call counts under the tool it names.
func (s *Server) limitCalls(next server.ToolHandlerFunc) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		tool := req.Params.Name
		if inner, _ := req.GetArguments()["name"].(string); tool == callToolName && inner != "" {
			tool = inner
		}
		if err := s.rateLimited(ctx, tool); err != nil {
			return errorResult(err), nil
		}
		return next(ctx, req)
	}
}
