package metatools

import (
	"context"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-router/mcp-router/executor"
	"github.com/mcp-router/mcp-router/proxy/call"
	"github.com/mcp-router/mcp-router/routing"
)

// What the meta-tools use of the gateway that hosts them, each a small
// interface the host implements (proxy's Server and Hub, through views).

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

// Caller calls a catalog tool (c.Tool with c.Args) through the gateway's
// call path; a failure is an isError result the model reads.
type Caller interface {
	Call(ctx context.Context, c *call.Call) (*mcp.CallToolResult, error)
}

// Approvals asks the person to approve a plan's gated steps before it
// runs, and marks them approved on the plan (approval.Gate); a result is
// the answer to send instead, asking the client in a round of its request.
type Approvals interface {
	Plan(ctx context.Context, c *call.Call, p *executor.Plan) (*mcp.CallToolResult, error)
}

// Missing is a tool missing from the catalog because its upstream is
// still starting, or down.
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
	// tools not in the catalog; it returns those still missing, in the
	// order of names.
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
	// Disabled is set for an upstream left out for its configuration;
	// Reason says why, in words the model may read.
	Disabled bool
	Reason   string
}

// Upstreams is the state of the configured upstreams, for discovery's
// outage alerts and its wait for upstreams still starting.
type Upstreams interface {
	// Upstreams is a snapshot of every configured upstream, the disabled
	// ones last.
	Upstreams() []Upstream
	// PendingOwner is the upstream, never connected or still starting,
	// whose prefix tool has; "" for none.
	PendingOwner(tool string) string
	// AwaitStarted waits, at most one start wait, until the first
	// attempt of each named upstream has ended.
	AwaitStarted(ctx context.Context, names []string)
}

// Client tells the client of a request what the meta-tools did.
type Client interface {
	// ToolsChanged says that c's client's tool list changed.
	ToolsChanged(ctx context.Context, c *call.Call)
	// Progress reports a plan's steps done out of total to c's client.
	Progress(ctx context.Context, c *call.Call, done, total int)
}

// Decisions runs the routing decisions of the meta-tools on a session,
// each in its trace span, and counts them.
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
