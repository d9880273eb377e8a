// Package metatools is the gateway's own tools (request_more_tools,
// call_tool, describe_tools, routing_feedback, run_plan, plan,
// read_result), the belt of each session and the handles of the stateless
// era. It uses the hub, router, planner and executor through the small
// interfaces of ports.go and never imports proxy.
package metatools

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-router/mcp-router/executor"
	"github.com/mcp-router/mcp-router/internal/defaults"
	"github.com/mcp-router/mcp-router/planner"
	"github.com/mcp-router/mcp-router/proxy/call"
	"github.com/mcp-router/mcp-router/routing"
	"github.com/mcp-router/mcp-router/routing/lessons"
)

// The names of the meta-tools.
const (
	CallToolName         = "call_tool"
	RequestMoreToolsName = "request_more_tools"
	DescribeToolsName    = "describe_tools"
	FeedbackName         = "routing_feedback"
	RunPlanName          = "run_plan"
	PlanName             = "plan"
)

// Options configure the meta-tools. Catalog, Caller, Starts and Executor
// are required; so are Upstreams, HandleKey and Decisions with a Router.
type Options struct {
	Catalog  Catalog
	Caller   Caller
	Starts   Starts
	Executor *executor.Executor
	// Router, when set, routes: sessions have belts. nil routes nothing.
	Router *routing.Router
	// Session are the options of each routing session.
	Session routing.SessionOptions
	// Core are the core tools, on every belt.
	Core []string
	// Upstreams is the state of the upstreams, for outage alerts.
	Upstreams Upstreams
	// HandleKey signs the handles of the stateless era.
	HandleKey []byte
	// Decisions runs routing decisions.
	Decisions Decisions
	// Client is told of belt changes and plan progress; nil tells none.
	Client Client
	// Planner, when set, shows plan.
	Planner *planner.Planner
	// Lessons, when set, shows routing_feedback and learns from detours.
	Lessons *lessons.Memory
	// Inputs bound what the model hands the tools.
	Inputs InputLimits
	// Approvals asks once about a plan's gated steps; nil asks nothing.
	Approvals Approvals
	// Metrics counts discoveries, belts and plans; nil counts nothing.
	Metrics Metrics
	// ErrorResult renders a failure as a result; nil renders its text.
	ErrorResult func(error) *mcp.CallToolResult
	// Results, when set, shows read_result; ResultPage bounds its pages.
	Results    Results
	ResultPage int
	// Logger logs routing events; nil is silent.
	Logger *slog.Logger
}

// Tools is the gateway's own tools with each client's routing state.
type Tools struct {
	opts    Options
	belts   *belts   // nil without a router
	handles *handles // nil without a router
	outages sync.Map // session id -> its search met an outage: the detour is not learned
	lines   lines    // what request_more_tools shows of each tool
}

// New builds the meta-tools. It does no I/O.
func New(opts Options) *Tools {
	opts.Inputs.defaults()
	opts.Logger = cmp.Or(opts.Logger, slog.New(slog.DiscardHandler))
	if opts.ErrorResult == nil {
		opts.ErrorResult = func(err error) *mcp.CallToolResult { return mcp.NewToolResultError(err.Error()) }
	}
	if opts.Router != nil {
		opts.Catalog = userFacing{opts.Catalog, opts.Router}
	}
	t := &Tools{opts: opts}
	if opts.Router != nil {
		t.belts = &belts{router: opts.Router, opts: opts.Session, core: opts.Core, sessions: map[string]*routing.Session{}}
		t.handles = newHandles(opts.HandleKey)
	}
	return t
}

// Handler answers a call of a meta-tool.
type Handler func(ctx context.Context, c *call.Call, req mcp.CallToolRequest) (*mcp.CallToolResult, error)

// Entry is one meta-tool: its definition and its handler.
type Entry struct {
	Def     mcp.Tool
	Handler Handler
}

type metaTool struct {
	def     mcp.Tool
	handler func(t *Tools, ctx context.Context, c *call.Call, req mcp.CallToolRequest) (*mcp.CallToolResult, error)
	// enabled says whether t shows the tool; nil means always.
	enabled func(t *Tools) bool
}

// table is the one list of the meta-tools, in order. It is filled in init
// because the handlers ask IsOwn, which reads it.
var table []metaTool

var own []string

func init() {
	table = []metaTool{
		{def: callToolDef, handler: (*Tools).callTool},
		{def: runPlanDef, handler: (*Tools).runPlan},
		{def: planDef, handler: (*Tools).plan, enabled: func(t *Tools) bool { return t.opts.Planner != nil }},
		{def: feedbackDef, handler: (*Tools).routingFeedback, enabled: func(t *Tools) bool { return t.opts.Lessons != nil }},
		{def: requestMoreToolsDef, handler: (*Tools).requestMoreTools, enabled: (*Tools).Routes},
		{def: describeToolsDef, handler: (*Tools).describeTools, enabled: (*Tools).Routes},
		{def: readResultDef, handler: (*Tools).readResult, enabled: func(t *Tools) bool { return t.opts.Results != nil }},
	}
	for _, m := range table {
		own = append(own, m.def.Name)
	}
}

// Reserved returns the tool names upstreams may not take.
func Reserved() []string { return slices.Clone(own) }

// IsOwn reports the gateway's own tools (call_tool, request_more_tools, ...).
func IsOwn(name string) bool { return slices.Contains(own, name) }

// Routes reports whether t routes: it has a router, and so belts.
func (t *Tools) Routes() bool { return t.belts != nil }

// Shown are the meta-tools t shows, in the order of registration.
func (t *Tools) Shown() []Entry {
	var out []Entry
	for _, m := range table {
		if m.enabled != nil && !m.enabled(t) {
			continue
		}
		h := m.handler
		out = append(out, Entry{Def: m.def, Handler: func(ctx context.Context, c *call.Call, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return h(t, ctx, c, req)
		}})
	}
	return out
}

// userFacing hides internal tools (require_user_facing) from the
// meta-tools, which treat them as unknown.
type userFacing struct {
	Catalog
	router *routing.Router
}

func (u userFacing) Tool(name string) (Tool, bool) {
	if u.router.Internal(name) {
		return Tool{}, false
	}
	return u.Catalog.Tool(name)
}

// internal tells that name is an internal tool, not for the model to call.
func (t *Tools) internal(name string) bool {
	return t.opts.Router != nil && t.opts.Router.Internal(name)
}

func internalError(meta, name string) *mcp.CallToolResult {
	return mcp.NewToolResultError(fmt.Sprintf("%s: %q is an internal tool (require_user_facing): it is not for the model to call", meta, name))
}

// InputLimits bound the text the model hands the gateway's own tools.
// Zero values take the defaults in brackets.
type InputLimits struct {
	// MaxQueryBytes bounds a query, also tools/list's mcp-router/query [8 KiB].
	MaxQueryBytes int
	// MaxNoteBytes bounds the note of routing_feedback [2 KiB].
	MaxNoteBytes int
	// MaxContextBytes bounds the context of plan [64 KiB].
	MaxContextBytes int
}

// Defaults of InputLimits.
const (
	DefaultMaxQueryBytes   = 8 << 10
	DefaultMaxNoteBytes    = 2 << 10
	DefaultMaxContextBytes = 64 << 10
)

// WithDefaults is l with its zero values set to the defaults.
func (l InputLimits) WithDefaults() InputLimits {
	l.defaults()
	return l
}

func (l *InputLimits) defaults() {
	defaults.Set(&l.MaxQueryBytes, DefaultMaxQueryBytes)
	defaults.Set(&l.MaxNoteBytes, DefaultMaxNoteBytes)
	defaults.Set(&l.MaxContextBytes, DefaultMaxContextBytes)
}

// tooLong is the error result for an argument over max bytes, or nil.
func tooLong(tool, arg, v string, max int) *mcp.CallToolResult {
	if len(v) <= max {
		return nil
	}
	return mcp.NewToolResultError(fmt.Sprintf("%s: %q is %d bytes, more than the limit of %d: shorten it", tool, arg, len(v), max))
}
