// Package call is one request through the gateway: the value the edge
// builds for it (who calls, on which session, in which era), and
// the stages a tools/call, resources/read or prompts/get passes on its way
// to an upstream: [Audit], [Authorise], [StartWait], [Screen], [ArgCheck],
// [Limits], [Trace] and [Cap]. A failed call is an [*Error] of a [Kind].
// The context carries cancellation, deadlines and the span only.
package call

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"sync/atomic"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcp-router/mcp-router/executor"
	"github.com/mcp-router/mcp-router/proxy/frontdoor"
	"github.com/mcp-router/mcp-router/proxy/internal/upstream"
	"github.com/mcp-router/mcp-router/routing"
)

// Era is the protocol era of the client's request.
type Era int

const (
	// Sessions is the 2025 era: the client holds an initialized session.
	Sessions Era = iota
	// Stateless is the 2026-07-28 era: each request stands alone.
	Stateless
)

// Call is one client request as the edge saw it.
type Call struct {
	// Principal is the bearer token's fingerprint; "" for none.
	Principal string
	// Session is the client's session id; "" in the stateless era.
	Session string
	// Era is the protocol era of the request.
	Era Era
	// Caps are what the client said it can do; nil when unknown.
	Caps *mcp.ClientCapabilities

	// Method is mcp.MethodToolsCall (also when empty),
	// mcp.MethodResourcesRead or mcp.MethodPromptsGet.
	Method mcp.MCPMethod
	// Tool is the exposed name of the tool or prompt, or the resource URI.
	Tool string
	// Args are the arguments as sent (a read's mcp.ReadResourceParams).
	Args any
	// Plan and Step name the plan run and step of this call, if any.
	Plan, Step string
	// StartWaited says the edge already waited for the upstream to start.
	StartWaited bool
	// Approved says the person approved this call with its plan: set only
	// from the plan value the gateway built, never from the model's JSON.
	Approved bool
	// Approval is how the approval stage let the call go on ("" if ungated).
	Approval string
	// Approver is the principal that answered for the call in the console.
	Approver string
	// Whole says the result goes to an in-process caller: it is not capped.
	Whole bool
	// Progress hears the upstream's progress reports; nil for none. It must not block.
	Progress func(Progress)

	// Upstream is the tool's server, once a stage resolved it.
	Upstream string
	// Meta is the request's _meta (its progress token); nil for none.
	Meta *mcp.Meta
	// Input are the client's answers to an earlier round of this request
	// (the stateless era's multi round-trip requests); nil for none.
	Input *mcp.MultiRoundTripParams

	// Client is the key of the request's credential, which stateless-era handles are bound to.
	Client string
	// Carried is the routing state a stateless-era request's handle brought; nil otherwise.
	Carried *Carried
}

// Carried is the routing state of a stateless-era request.
type Carried struct {
	// Session is the routing session the handle restored.
	Session *routing.Session
	// Outage is set when the request met an upstream down or starting:
	// the detour it causes is not learned.
	Outage bool
	// Note says why the handle passed was ignored, if it was.
	Note string
}

// Progress is one progress report of a call's upstream.
type Progress = upstream.Progress

// HandlerOf answers a request whose result is an R.
type HandlerOf[R any] func(ctx context.Context, c *Call) (R, error)

// StageOf is one concern on a request's way: it may refuse the request,
// change it, or look at the result.
type StageOf[R any] func(ctx context.Context, c *Call, next HandlerOf[R]) (R, error)

// Handler answers a tools/call.
type Handler = HandlerOf[*mcp.CallToolResult]

// Stage is one concern on a tools/call's way.
type Stage = StageOf[*mcp.CallToolResult]

// Chain is last behind stages, the first stage outermost.
func Chain[R any](last HandlerOf[R], stages ...StageOf[R]) HandlerOf[R] {
	h := last
	for i := len(stages) - 1; i >= 0; i-- {
		s, next := stages[i], h
		h = func(ctx context.Context, c *Call) (R, error) { return s(ctx, c, next) }
	}
	return h
}

// New is the edge: it reads what mcp-go, the front door and the executor
// put in ctx into the Call of a tools/call, once.
func New(ctx context.Context, tool string, args any) *Call {
	c := &Call{Principal: PrincipalOf(ctx), Session: SessionOf(ctx), Tool: tool, Args: args}
	if server.IsModernRequest(ctx) {
		c.Era = Stateless
	}
	c.Plan, c.Step, _ = executor.StepOf(ctx)
	c.Approved, c.Approver = executor.StepApproval(ctx)
	if info := server.RequestProtocolInfoFromContext(ctx); info != nil && info.Modern {
		c.Caps = info.ClientCapabilities // declared with each request
	} else if cs, ok := server.ClientSessionFromContext(ctx).(server.SessionWithClientInfo); ok {
		caps := cs.GetClientCapabilities()
		c.Caps = &caps
	}
	return c
}

// SessionOf is the id of the client session of ctx ("" for none).
func SessionOf(ctx context.Context) string {
	if cs := server.ClientSessionFromContext(ctx); cs != nil {
		return cs.SessionID()
	}
	return ""
}

// PrincipalOf is the front door's principal of ctx's request, "" for none.
func PrincipalOf(ctx context.Context) string {
	if p := frontdoor.PrincipalOf(ctx); p != frontdoor.LocalPrincipal {
		return p
	}
	return ""
}

// A session id lets whoever holds it resume the session, so logs, traces
// and audit records name a session by SessionTag, a short hash.

// SessionTag is "s-" and 12 hex digits of id's SHA-256, "" for none.
func SessionTag(id string) string {
	if id == "" {
		return ""
	}
	if last := lastTag.Load(); last != nil && last.id == id {
		return last.tag // the calls of a session come in runs
	}
	sum := sha256.Sum256([]byte(id))
	tag := "s-" + hex.EncodeToString(sum[:6])
	lastTag.Store(&sessionTag{id, tag})
	return tag
}

// lastTag is the last session id SessionTag hashed, and its tag.
var lastTag atomic.Pointer[sessionTag]

type sessionTag struct{ id, tag string }

// Who is c's principal, frontdoor.LocalPrincipal for none.
func (c *Call) Who() string { return cmp.Or(c.Principal, frontdoor.LocalPrincipal) }

// Authorise is the stage that refuses what heldBack says is held back from
// callers (a blocked or app-only tool, a prompt or resource not offered).
func Authorise[R any](heldBack func(c *Call) error) StageOf[R] {
	return StartWait[R](func(_ context.Context, c *Call) error { return heldBack(c) })
}

// StartWait is the stage that resolves c.Upstream: resolve waits for an
// upstream still starting and says why the request cannot be served.
func StartWait[R any](resolve func(ctx context.Context, c *Call) error) StageOf[R] {
	return func(ctx context.Context, c *Call, next HandlerOf[R]) (R, error) {
		if err := resolve(ctx, c); err != nil {
			var none R
			return none, err
		}
		return next(ctx, c)
	}
}

// Screen is the stage that screens every result (integrity, secret
// scrubbing) by the rules of the upstream that gave it, taken before the
// request goes on; a screen may refuse a result whole.
func Screen[R any](screener func(c *Call) (func(R) (R, error), error)) StageOf[R] {
	return func(ctx context.Context, c *Call, next HandlerOf[R]) (R, error) {
		var none R
		screen, err := screener(c)
		if err != nil {
			return none, err
		}
		res, err := next(ctx, c)
		if err != nil {
			return none, err
		}
		return screen(res)
	}
}
