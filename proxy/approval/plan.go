package approval

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-router/mcp-router/executor"
	"github.com/mcp-router/mcp-router/proxy/call"
)

// Item is one gated call as the person reads it.
type Item struct {
	Step, Tool, Upstream string
	Args                 string // Summary of its arguments
}

// Plan asks the person once, before p runs, about all of its gated steps,
// and on approval marks them approved on p (executor.Plan.Approved), so
// that its steps pass the gate unasked. Arguments that references fill in
// are shown as the references they are. A dry run asks nothing. A
// refusal is the error; no step of p runs then. A stateless-era client is
// asked in a round of its request: the result to answer with instead.
func (g *Gate) Plan(ctx context.Context, c *call.Call, p *executor.Plan) (*mcp.CallToolResult, error) {
	if p.DryRun {
		return nil, nil
	}
	var items []Item
	for _, st := range p.Steps {
		if g.gated(st.Tool) {
			up, _, _ := g.o.Tool(st.Tool)
			items = append(items, Item{Step: st.ID, Tool: st.Tool, Upstream: up, Args: Summary(st.Args)})
		}
	}
	if len(items) == 0 {
		return nil, nil
	}
	start := time.Now()
	how, err := g.decide(ctx, c, planText(items), items[0].Upstream, p.Steps)
	if ir, ok := errors.AsType[*InputRequired](err); ok {
		return ir.Result, nil
	}
	g.auditPlan(c, items, start, how, err)
	if err != nil {
		return nil, err
	}
	for _, it := range items {
		p.Approved = append(p.Approved, it.Step)
	}
	return nil, nil
}

// planText lists a plan's gated steps for the question.
func planText(items []Item) string {
	var b strings.Builder
	fmt.Fprintf(&b, "run a plan with %d step(s) that need approval:", len(items))
	for _, it := range items {
		fmt.Fprintf(&b, "\n- step %s: %s on %s with %s", it.Step, it.Tool, it.Upstream, it.Args)
	}
	return b.String()
}

// auditPlan records the answer to a plan's question for each gated step:
// a declined plan makes no call, so these records are all that says it
// was asked; an approved one's steps are audited again as they run.
func (g *Gate) auditPlan(c *call.Call, items []Item, start time.Time, how string, err error) {
	if g.o.Audit == nil {
		return
	}
	for _, it := range items {
		step := &call.Call{Principal: c.Principal, Session: c.Session, Tool: it.Tool, Upstream: it.Upstream, Step: it.Step, Approval: how}
		r := call.AuditRecord(step, start, nil, err)
		if err == nil {
			r.Outcome = "plan_" + how
		}
		g.o.Audit.Record(r)
	}
}
