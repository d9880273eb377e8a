package proxy

import (
	"context"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-router/mcp-router/executor"
	"github.com/mcp-router/mcp-router/planner"
	"github.com/mcp-router/mcp-router/proxy/metatools"
	"github.com/mcp-router/mcp-router/routing"
)

// hubCaller is how plans call tools: through the hub, each call counting
// for the session's breaker and domain context like a direct call (when
// there is a server with sessions).
type hubCaller struct {
	hub *Hub
	s   *Server // nil outside a server (mcp-router run)
}

func (c hubCaller) CallTool(ctx context.Context, name string, args any) (*mcp.CallToolResult, error) {
	if c.s != nil {
		if err := c.s.rateLimited(ctx, name); err != nil { // each step counts (SEC-15)
			return nil, err
		}
	}
	res, err := c.hub.CallTool(ctx, name, args, nil)
	if c.s != nil {
		step := callOf(ctx)
		step.Tool = name
		c.s.meta.Called(ctx, step, err == nil && !res.IsError)
	}
	return res, err
}

// NewExecutor returns an executor that calls the hub's catalog tools.
func NewExecutor(h *Hub, opts executor.Options) *executor.Executor {
	return newExecutor(hubCaller{hub: h}, h, opts)
}

func newExecutor(c executor.Caller, h *Hub, opts executor.Options) *executor.Executor {
	opts.Caller = c
	opts.Lookup = func(name string) (executor.ToolInfo, bool) {
		t, ok := h.Catalog().Tool(name)
		if !ok {
			return executor.ToolInfo{}, false
		}
		return executor.ToolInfo{Name: t.Name, Upstream: t.Upstream, InputSchema: t.Def.RawInputSchema, OutputSchema: t.Def.RawOutputSchema}, true
	}
	opts.Explain = func(name string) string { return h.Catalog().explainUnknown(name) }
	return executor.New(opts)
}

// PlanResult renders an executed plan; see metatools.PlanResult.
func PlanResult(r *executor.Result) *mcp.CallToolResult { return metatools.PlanResult(r) }

// PlannerRequest hands the planner the routed tools of c and the best
// ranked ones; see metatools.PlannerRequest.
func PlannerRequest(c *Catalog, d routing.Decision, query, context string) planner.Request {
	return metatools.PlannerRequest(catalogOf{c}, d, query, context)
}
