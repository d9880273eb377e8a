package metatools

import (
	"context"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-router/mcp-router/executor"
	"github.com/mcp-router/mcp-router/proxy/call"
	"github.com/mcp-router/mcp-router/routing"
)

// What the meta-tools use of their host, each a small interface.

// Tool is a catalog tool as the meta-tools read it.
type Tool struct {
	Name     string // exposed name, unique in the catalog
	Upstream string
	Domain   string
	Server   string   // what its upstream is for, as configured
	Def      mcp.Tool // the definition shown to clients
}

// Catalog finds the tools of the current catalog by exposed name.
type Catalog interface {
	Tool(name string) (Tool, bool)
}

// Caller calls c.Tool through the gateway's call path.
type Caller interface {
	Call(ctx context.Context, c *call.Call) (*mcp.CallToolResult, error)
}

// Approvals asks about a plan's gated steps and marks them approved
// (approval.Gate); a result is the answer to send instead. A stateless-era
// question keeps carry (what p was decoded from) in its state, and
// Carried reads it back from the retry that answers it.
type Approvals interface {
	Plan(ctx context.Context, c *call.Call, p *executor.Plan, carry []byte) (*mcp.CallToolResult, error)
	Carried(c *call.Call) []byte
}

// Missing is a tool missing because its upstream is starting, or down.
type Missing struct {
	Tool, Upstream, Kind string
	// Cause is what keeps it out, in words the model may read.
	Cause error
	// Err is the whole error, as the host's call path reports it.
	Err error
}

// Starts waits for the upstreams still starting.
type Starts interface {
	// Await waits, one start wait in all, for the upstreams of the named
	// tools not in the catalog, and returns those still missing.
	Await(ctx context.Context, names []string) []Missing
	// Settle waits until a catalog just stored is indexed.
	Settle()
}

// Upstream is one configured upstream as discovery sees it.
type Upstream struct {
	Name, Domain string
	About        string // what it is for, as configured
	Connected    bool
	// EverConnected is set once it has connected in this run.
	EverConnected bool
	// Starting is set during its first attempt.
	Starting         bool
	Since, DownSince time.Time
	// Disabled: left out for its configuration, for Reason.
	Disabled bool
	Reason   string
}

// Upstreams is the state of the configured upstreams.
type Upstreams interface {
	// Upstreams is a snapshot of the upstreams, disabled ones last. It
	// may leave out those connected and not Starting: discovery reads
	// only the others.
	Upstreams() []Upstream
	// PendingOwner is the unconnected upstream whose prefix tool has.
	PendingOwner(tool string) string
	// AwaitStarted waits for the first attempt of each named upstream.
	AwaitStarted(ctx context.Context, names []string)
}

// Client tells the client of a request what the meta-tools did.
type Client interface {
	// ToolsChanged says that c's client's tool list changed.
	ToolsChanged(ctx context.Context, c *call.Call)
	// Progress reports a plan's steps done out of total to c's client.
	Progress(ctx context.Context, c *call.Call, done, total int)
}

// Decisions runs routing decisions, each in its span, and counts them.
type Decisions interface {
	Discover(ctx context.Context, sess *routing.Session, req routing.Request) (routing.Discovery, error)
	Preview(ctx context.Context, sess *routing.Session, req routing.Request) routing.Decision
}

// Metrics counts discoveries, belts and plans.
type Metrics interface {
	Discovery(added, evicted int)
	BreakerTrip()
	BeltSize(sessions, tools int)
	PlanDone(strategy string, dur time.Duration, statuses map[string]int)
}
