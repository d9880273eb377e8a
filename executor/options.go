package executor

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-router/mcp-router/internal/defaults"
)

// Caller calls one catalog tool by exposed name: an error when the tool
// cannot be reached, a result with IsError when it failed. It must return
// soon after ctx is done and not modify args (parts may be shared).
type Caller interface {
	CallTool(ctx context.Context, name string, args any) (*mcp.CallToolResult, error)
}

// ToolInfo is what validation needs of a catalog tool; Upstream is for the
// per-upstream concurrency limit.
type ToolInfo struct {
	Name         string
	Upstream     string
	InputSchema  json.RawMessage
	OutputSchema json.RawMessage
}

// Options configure an Executor. Zero or negative numbers take the default
// shown in brackets.
type Options struct {
	Caller Caller                             // required by Run
	Lookup func(name string) (ToolInfo, bool) // required: the catalog
	// Explain, when set, is appended to the problem of a step naming a
	// tool the catalog does not have, such as "; did you mean a, b?".
	Explain func(name string) string

	MaxSteps     int // steps in one plan [64]
	MaxArgBytes  int // size of one step's literal args as JSON [256 KiB]
	MaxParallel  int // concurrent calls of one plan, the default and cap for a plan's max_parallel [16]
	PerUpstream  int // concurrent calls of one plan to one upstream (ToolInfo.Upstream) [8]
	ForeachWidth int // concurrent elements of one foreach step [4]

	// The bounds of one run (bound.go).
	MaxTextBytes     int // one string built by interpolation [1 MiB]
	MaxExpandedBytes int // the arguments of all of a plan's calls, references filled in, as JSON [32 MiB]
	MaxForeachItems  int // elements of one foreach step [1000]
	MaxCalls         int // calls one plan makes, foreach elements each counted [1000]
	MaxResultBytes   int // the values a plan keeps for its result, and its output, as JSON [32 MiB]

	StepTimeout    time.Duration // deadline of each call unless the step sets timeout_ms [60s]
	MaxStepTimeout time.Duration // cap on a step's timeout_ms [10m]
	MaxDeadline    time.Duration // deadline of a plan, and cap on its deadline_ms [10m]

	Logger *slog.Logger // nil is silent; logs plan_id, step, tool, dur, never argument values
}

// Defaults of Options.
const (
	DefaultMaxSteps         = 64
	DefaultMaxArgBytes      = 256 << 10
	DefaultMaxParallel      = 16
	DefaultPerUpstream      = 8
	DefaultForeachWidth     = 4
	DefaultMaxTextBytes     = 1 << 20
	DefaultMaxExpandedBytes = 32 << 20
	DefaultMaxForeachItems  = 1000
	DefaultMaxCalls         = 1000
	DefaultMaxResultBytes   = 32 << 20
	DefaultStepTimeout      = 60 * time.Second
	DefaultMaxStepTimeout   = 10 * time.Minute
	DefaultMaxDeadline      = 10 * time.Minute
)

// Executor validates and runs plans. It is safe for concurrent use.
type Executor struct {
	opts    Options
	log     *slog.Logger
	schemas schemaCache
}

// New returns an Executor with the defaults applied. It does no I/O.
func New(opts Options) *Executor {
	defaults.Set(&opts.MaxSteps, DefaultMaxSteps)
	defaults.Set(&opts.MaxArgBytes, DefaultMaxArgBytes)
	defaults.Set(&opts.MaxParallel, DefaultMaxParallel)
	defaults.Set(&opts.PerUpstream, DefaultPerUpstream)
	defaults.Set(&opts.ForeachWidth, DefaultForeachWidth)
	defaults.Set(&opts.MaxTextBytes, DefaultMaxTextBytes)
	defaults.Set(&opts.MaxExpandedBytes, DefaultMaxExpandedBytes)
	defaults.Set(&opts.MaxForeachItems, DefaultMaxForeachItems)
	defaults.Set(&opts.MaxCalls, DefaultMaxCalls)
	defaults.Set(&opts.MaxResultBytes, DefaultMaxResultBytes)
	defaults.Set(&opts.StepTimeout, DefaultStepTimeout)
	defaults.Set(&opts.MaxStepTimeout, DefaultMaxStepTimeout)
	defaults.Set(&opts.MaxDeadline, DefaultMaxDeadline)
	if opts.Explain == nil {
		opts.Explain = func(string) string { return "" }
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Executor{opts: opts, log: log}
}
