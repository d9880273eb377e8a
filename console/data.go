package console

import (
	"context"
	"errors"
	"time"

	"github.com/mcp-router/mcp-router/routing"
)

// ErrReadOnly is what a Gateway returns for an action it cannot take: `mcp-router ui` shows the
// running gateways' state but does not run their upstreams.
var ErrReadOnly = errors.New("read-only: this console does not run the upstreams")

// Gateway is what the console shows of the running upstreams.
type Gateway interface {
	// Upstreams returns every upstream's state, by name.
	Upstreams(ctx context.Context) ([]Upstream, error)
	// Restart restarts one upstream, or returns ErrReadOnly.
	Restart(ctx context.Context, upstream string) error
	// Activity returns the calls served and the latest ones.
	Activity(ctx context.Context) (Activity, error)
}

// Catalog is the tools the upstreams offer, and the router ranking them.
type Catalog interface {
	// Tools returns the catalog's tools, by name, and its warnings.
	Tools(ctx context.Context) ([]Tool, []string, error)
	// Route ranks the catalog for a request.
	Route(ctx context.Context, req routing.Request) (routing.Decision, error)
}

// Upstream is one upstream as the console shows it.
type Upstream struct {
	Name     string
	Gateway  string // the gateway it runs in, in `mcp-router ui`; "" in serve
	State    string
	Protocol string
	Tools    int
	Blocked  int
	Restarts int
	Err      string
	Since    time.Time
	// Restartable is set when Restart can restart it.
	Restartable bool
}

// Tool is one catalog tool.
type Tool struct {
	Name        string
	Upstream    string
	Domain      string
	Description string
}

// Activity is what a gateway served.
type Activity struct {
	Calls, Failed uint64
	Cancelled     uint64 // by the client; not counted in Failed
	Recent        []Call // newest first
}

// Call is one tool call.
type Call struct {
	At       time.Time
	Gateway  string
	Upstream string
	Tool     string
	Dur      time.Duration
	Kind     string // "" when the tool ran, else why the call failed
}
