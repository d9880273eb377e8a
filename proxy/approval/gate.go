package approval

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-router/mcp-router/internal/clip"
	"github.com/mcp-router/mcp-router/proxy/call"
)

// The kinds of a call the gate did not let through.
const (
	// Declined: the person declined, cancelled, or left approve unset.
	Declined call.Kind = "declined_by_user"
	// Timeout: no answer within the call's deadline.
	Timeout call.Kind = "approval_timeout"
	// Unavailable: the client cannot be asked (without_elicitation: refuse).
	Unavailable call.Kind = "approval_unavailable"
)

// The approval outcomes a call's audit record keeps (call.Call.Approval).
const (
	Approved          = "approved"            // the person approved it through the client
	ApprovedInPlan    = "approved_with_plan"  // the person approved its plan's gated steps at once
	ApprovedInConsole = "approved_in_console" // an administrative principal approved it in the console
	AllowedUnasked    = "allowed_unasked"     // without_elicitation: allow
	Asked             = "asked"               // a stateless-era round that asked; the retry carries the answer
)

// Options configure a Gate.
type Options struct {
	Policy Policy
	// Tool gives an exposed tool's upstream and whether it is marked
	// destructive; ok is false for a name the catalog does not have.
	Tool func(name string) (upstream string, destructive, ok bool)
	// Ask elicits from the client of ctx's request; nil when none can be asked.
	Ask func(ctx context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error)
	// Queue is where calls wait under without_elicitation: console; nil refuses them.
	Queue *Queue
	// Audit records the answer to a plan's question for each gated step.
	Audit call.Auditor
	// Logger hears the answers; nil is silent.
	Logger *slog.Logger
}

// Gate asks the person before a gated call goes upstream.
type Gate struct {
	o      Options
	rounds *rounds // the questions of the stateless era (rounds.go)
}

// New returns the gate of o. It does no I/O.
func New(o Options) *Gate {
	o.Logger = cmp.Or(o.Logger, slog.New(slog.DiscardHandler))
	return &Gate{o: o, rounds: newRounds()}
}

// Stage lets a gated call go on only once the person approved it (or its
// plan); otherwise it fails with Declined, Timeout or Unavailable.
// c.Approval says how it was let through.
func (g *Gate) Stage(ctx context.Context, c *call.Call, next call.Handler) (*mcp.CallToolResult, error) {
	if !g.gated(c.Tool) {
		return next(ctx, c)
	}
	if c.Approved {
		c.Approval = ApprovedInPlan
		return next(ctx, c)
	}
	what := fmt.Sprintf("call %s on %s with %s", c.Tool, c.Upstream, Summary(c.Args))
	how, err := g.decide(ctx, c, what, c.Upstream, c.Args)
	c.Approval = how
	if ir, ok := errors.AsType[*InputRequired](err); ok {
		c.Approval = Asked
		return ir.Result, nil // the client asks the person and retries the call
	}
	if err != nil {
		return nil, err
	}
	return next(ctx, c)
}

// gated tells that a call of tool must be approved; a name the catalog
// does not have is still gated by approvals.tools (fail closed).
func (g *Gate) gated(tool string) bool {
	if !g.o.Policy.On() {
		return false
	}
	destructive := false
	if g.o.Tool != nil {
		_, destructive, _ = g.o.Tool(tool)
	}
	return g.o.Policy.Gated(tool, destructive)
}

// upstream is the server of tool, "" when unknown.
func (g *Gate) upstream(tool string) string {
	if g.o.Tool == nil {
		return ""
	}
	up, _, _ := g.o.Tool(tool)
	return up
}

// decide asks the person about what for c (subject is what the answer
// approves), within c's deadline and the policy's timeout: by elicitation
// when possible, else as without_elicitation says. It returns how the call
// was let through, or why not (an *InputRequired asks in a round).
func (g *Gate) decide(ctx context.Context, c *call.Call, what, upstream string, subject any) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, g.o.Policy.timeout())
	defer cancel()
	var how string
	var err error
	switch {
	case canElicit(c) && g.o.Ask != nil:
		how, err = g.elicit(ctx, what)
	case canRound(c):
		how, err = g.round(c, what, subject)
	case g.o.Policy.mode() == Allow:
		how = AllowedUnasked
	case g.o.Policy.mode() == Console && g.o.Queue != nil:
		how, err = g.console(ctx, c, what, upstream)
	default:
		err = refused(Unavailable, c, fmt.Errorf("the client cannot be asked for approval (it did not declare elicitation%s), "+
			"and approvals.without_elicitation is %s: use a client that does, or set the key to console or allow", stepNote(c), g.o.Policy.mode()))
	}
	if _, ok := errors.AsType[*InputRequired](err); ok {
		return "", err
	}
	if err != nil {
		err = classify(ctx, c, err)
		g.o.Logger.Info("call not approved", "tool", c.Tool, "upstream", c.Upstream, "err", err)
		return "", err
	}
	g.o.Logger.Info("call approved", "tool", c.Tool, "upstream", c.Upstream, "how", how)
	return how, nil
}

// stepNote says why a stateless-era plan step cannot ask.
func stepNote(c *call.Call) string {
	if c.Era == call.Stateless && c.Step != "" {
		return ", or this is a step its plan's question did not list: run the plan again"
	}
	return ""
}

// canElicit tells that c's client declared elicitation on a session.
func canElicit(c *call.Call) bool {
	return c.Era == call.Sessions && c.Caps != nil && c.Caps.Elicitation != nil
}

// elicit asks the client; only an accepted form with approve true approves.
func (g *Gate) elicit(ctx context.Context, what string) (string, error) {
	res, err := g.o.Ask(ctx, Question(what))
	if err != nil {
		return "", err
	}
	if res.Action == mcp.ElicitationResponseActionAccept && approves(res.Content) {
		return Approved, nil
	}
	return "", errDeclined(string(res.Action))
}

// round reads the answer a stateless-era retry brought, or asks for one.
func (g *Gate) round(c *call.Call, what string, subject any) (string, error) {
	res, asked, lapsed := g.rounds.answer(c, subject)
	switch {
	case lapsed:
		return "", refused(Timeout, c, errLapsed)
	case !asked:
		return "", g.rounds.ask(c, subject, what, g.o.Policy.timeout())
	case res == nil:
		return "", errDeclined("no answer")
	case res.Action == mcp.ElicitationResponseActionAccept && approves(res.Content):
		return Approved, nil
	}
	return "", errDeclined(string(res.Action))
}

// console waits for an administrative principal's answer.
func (g *Gate) console(ctx context.Context, c *call.Call, what, upstream string) (string, error) {
	d, err := g.o.Queue.Wait(ctx, Request{Tool: c.Tool, Upstream: upstream, Principal: c.Who(), Summary: what})
	c.Approver = d.By
	switch {
	case errors.Is(err, ErrQueueFull):
		return "", refused(Unavailable, c, fmt.Errorf("%w: approvals.without_elicitation is console, and the call cannot wait: try again once the person has answered", err))
	case errors.Is(err, ErrNoConsole):
		return "", refused(Unavailable, c, fmt.Errorf("approvals.without_elicitation is console, but %w", err))
	case err != nil:
		return "", err
	case !d.Approve:
		return "", errDeclined("declined in the console")
	}
	return ApprovedInConsole, nil
}

type declined string

func (d declined) Error() string { return "the person did not approve the call (" + string(d) + ")" }

func errDeclined(why string) error { return declined(cmp.Or(why, "no answer")) }

// classify turns what went wrong into the refusal the model reads.
func classify(ctx context.Context, c *call.Call, err error) error {
	var r *Refusal
	var d declined
	switch {
	case errors.As(err, &r):
		return err
	case errors.As(err, &d):
		return refused(Declined, c, err)
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return refused(Timeout, c, errors.New("no answer from the person within the call's deadline"))
	case ctx.Err() != nil:
		return &call.Error{Kind: call.KindCancelled, Upstream: c.Upstream, Tool: c.Tool, Err: ctx.Err()}
	}
	return refused(Unavailable, c, fmt.Errorf("asking the client for approval: %w", err))
}

// Refusal is a call the gate did not let through; its text starts with
// its kind, and it unwraps to the *call.Error.
type Refusal struct{ E *call.Error }

func refused(k call.Kind, c *call.Call, err error) *Refusal {
	return &Refusal{&call.Error{Kind: k, Upstream: c.Upstream, Tool: c.Tool, Err: err}}
}

func (r *Refusal) Error() string {
	if r.E.Upstream == "" { // a plan's question: its steps' servers are in it
		return fmt.Sprintf("%s: %s was not run: %v", r.E.Kind, r.E.Tool, r.E.Err)
	}
	return fmt.Sprintf("%s: %s was not called on %s: %v", r.E.Kind, r.E.Tool, r.E.Upstream, r.E.Err)
}

func (r *Refusal) Unwrap() error { return r.E }

// MaxMessageBytes bounds the message of the question the person reads.
const MaxMessageBytes = 4000

// The words around what a question asks; maxWhat is the room they leave.
const (
	askPrefix = "mcp-router asks your approval to "
	askSuffix = ". Set approve and accept to let it go on; decline to stop it."
	maxWhat   = MaxMessageBytes - len(askPrefix) - len(askSuffix)
)

// Field is the approval form's one boolean.
const Field = "approve"

// Question asks the person to approve what, with one boolean, not
// required, so that a form sent back unset is a decline, not an error.
func Question(what string) mcp.ElicitationRequest {
	req := mcp.ElicitationRequest{}
	req.Params.Message = clip.Ellipsis(askPrefix+what+askSuffix, MaxMessageBytes)
	req.Params.RequestedSchema = map[string]any{
		"type": "object",
		"properties": map[string]any{
			Field: map[string]any{"type": "boolean", "title": "Approve", "description": "Let this go on", "default": false},
		},
	}
	return req
}

// approves tells that a form's content sets approve to true.
func approves(content any) bool {
	if v, ok := content.(map[string]any); ok {
		b, ok := v[Field].(bool)
		return ok && b
	}
	b, err := json.Marshal(content)
	if err != nil {
		return false
	}
	var m map[string]any
	return json.Unmarshal(b, &m) == nil && approves(m)
}
