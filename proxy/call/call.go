// Package call is one request through the gateway: the value the edge
// builds for it (who calls, on which session, in which protocol era, by
// when) and the stages a tools/call, a resources/read or a prompts/get
// passes through on its way to an upstream and back.
//
// The context a stage receives carries cancellation and deadlines only
// (and the span of the call, where OpenTelemetry keeps it); everything
// else the gateway knows of the request is in the [Call].
//
// The stages, each in a file of its own with one job: [Audit] (the
// metrics and the audit record, audit.go, counting a result's size
// without encoding it in auditsize.go), [Authorise], [StartWait] and
// [Screen] (stages.go, each built from the one function of the hub it
// needs, and generic in the result, so that reads pass them too), [ArgCheck] (the arguments against the tool's input schema,
// argcheck.go), [Limits] (the quotas and the repeat bound, quota.go) and
// [Trace] (the span of the upstream call, trace.go) and [Cap] (what of a
// long result reaches the model, the whole kept for its caller,
// capresult.go). A failed call is an
// [*Error] of a [Kind] (errors.go). The hub lists the stages in their
// order once, in front of the upstream call, and the stages of a read
// (authorise, start-wait, integrity, tracing) next to them.
package call

import (
	"context"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcp-router/mcp-router/executor"
	"github.com/mcp-router/mcp-router/proxy/frontdoor"
	"github.com/mcp-router/mcp-router/routing"
)

// Era is the protocol era of the client's request.
type Era int

const (
	// Sessions is the 2025 era: the client initialized a session and
	// holds it across requests.
	Sessions Era = iota
	// Stateless is the 2026-07-28 era: each request stands alone.
	Stateless
)

// Call is one client request as the edge saw it, built once and passed
// down as a parameter.
type Call struct {
	// Principal is who calls: the fingerprint of the bearer token, or
	// "" for a caller with none (stdio, or HTTP without tokens).
	Principal string
	// Session is the client's session id; "" in the stateless era.
	Session string
	// Era is the protocol era of the request.
	Era Era
	// Caps are what the client said it can do (sampling, elicitation,
	// roots); nil when unknown.
	Caps *mcp.ClientCapabilities
	// Deadline is when the client stops waiting; zero is none.
	Deadline time.Time

	// Method is what the client asks: mcp.MethodToolsCall (also when
	// empty), mcp.MethodResourcesRead or mcp.MethodPromptsGet.
	Method mcp.MCPMethod
	// Tool is the exposed name of the catalog tool called or prompt got,
	// or the URI of the resource read.
	Tool string
	// Args are the arguments as the client sent them (a resource read's
	// are its mcp.ReadResourceParams).
	Args any
	// Plan and Step name the plan run and step that make this call (""
	// for a direct one).
	Plan, Step string
	// StartWaited says the edge already waited for the tool's upstream
	// to start: the call does not wait a second time.
	StartWaited bool
	// Approved says the person approved this call with its plan, before
	// the plan ran: set only at the edge, from the plan value the gateway
	// built (executor.StepApproved), never from what the model sent.
	Approved bool
	// Approval is how the approval stage let the call go on, for its
	// audit record ("" when the call was not gated).
	Approval string
	// Approver is the principal that answered for the call in the
	// console, approving or declining it ("" when no one did there).
	Approver string
	// Whole says the result goes to a caller in process (the CLI), not to
	// a model: the cap stage leaves it whole, as it does a plan step's.
	Whole bool
	// Progress hears the upstream's progress reports for this call; nil
	// when the client asked for none. It must not block.
	Progress func(Progress)

	// Upstream is the server that owns the tool, once a stage resolved it
	// ("" for a tool that is nobody's).
	Upstream string
	// Meta is the request's _meta (its progress token); nil for none.
	Meta *mcp.Meta
	// Input are the client's answers to what the gateway asked in an
	// earlier round of this request, and the state it echoed (the
	// stateless era's multi round-trip requests); nil for none.
	Input *mcp.MultiRoundTripParams

	// Client is the key of the credential the request came with, which
	// stateless-era handles are bound to; "" for none.
	Client string
	// Carried is the routing state a stateless-era request brought in
	// the handle it passed; the calls it makes report to it. nil
	// otherwise.
	Carried *Carried
}

// Carried is the routing state of a stateless-era request, restored from
// a handle: there is no session to keep it in.
type Carried struct {
	// Session is the routing session the handle restored.
	Session *routing.Session
	// Outage is set when the request's search or call met an upstream
	// that was down or starting: the detour it causes is not learned.
	Outage bool
	// Note says why the handle passed was ignored, if it was.
	Note string
}

// Progress is one progress report of a call's upstream.
type Progress struct {
	Progress float64
	Total    float64 // 0 when unknown
	Message  string
}

// HandlerOf answers a request whose result is an R: the upstream call at
// the end of a pipeline, or the rest of the pipeline as a stage sees it.
type HandlerOf[R any] func(ctx context.Context, c *Call) (R, error)

// StageOf is one concern on a request's way: it may refuse the request,
// change it, or look at the result next gives back. A stage that applies
// to tool calls and reads alike is generic in R.
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
// (for a plan step) put in ctx, once, into the Call of a tools/call of
// tool with args. Below it, nothing reads the caller from ctx.
func New(ctx context.Context, tool string, args any) *Call {
	c := &Call{Principal: PrincipalOf(ctx), Session: SessionOf(ctx), Tool: tool, Args: args}
	if server.IsModernRequest(ctx) {
		c.Era = Stateless
	}
	c.Deadline, _ = ctx.Deadline()
	c.Plan, c.Step, _ = executor.StepOf(ctx)
	c.Approved = executor.StepApproved(ctx)
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

// PrincipalOf is who the request in ctx came from, as the front door
// found it (the fingerprint of its bearer token), or "" for a caller with
// none (stdio, or HTTP without tokens).
func PrincipalOf(ctx context.Context) string {
	if p := frontdoor.PrincipalOf(ctx); p != frontdoor.LocalPrincipal {
		return p
	}
	return ""
}
