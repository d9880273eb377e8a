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

// Item is one gated step of a plan as the person reads it.
type Item struct {
	Step, Tool, Upstream string
	// Each is the array a foreach step runs over, as written; "" otherwise.
	Each string
	args any // as written: summarised in the room the question leaves
}

// minStepBytes is the least room for a step's arguments in a plan's
// question; a plan whose gated steps do not fit is refused.
const minStepBytes = 60

// Plan asks the person once, before p runs, about all of its gated steps,
// and on approval marks them approved on p so that they pass the gate
// unasked. References show as written, with a note that their values are
// not known yet. A plan whose steps do not fit one question is refused;
// a dry run asks nothing. A stateless-era client is asked in a round: the
// result to answer with instead. A non-nil carry is what p was decoded
// from (the plan tool's decision): the round's state holds it, and the
// answer approves it rather than p's steps, for the retry to read back
// with Carried and run unchanged.
func (g *Gate) Plan(ctx context.Context, c *call.Call, p *executor.Plan, carry []byte) (*mcp.CallToolResult, error) {
	if p.DryRun {
		return nil, nil
	}
	var items []Item
	for _, st := range p.Steps {
		if g.gated(st.Tool) {
			it := Item{Step: st.ID, Tool: st.Tool, Upstream: g.upstream(st.Tool), args: st.Args}
			if st.Foreach != nil {
				it.Each = summary(st.Foreach, MaxValueBytes)
			}
			items = append(items, it)
		}
	}
	if len(items) == 0 {
		return nil, nil
	}
	start := time.Now()
	what, err := planText(items)
	if err != nil {
		err = refused(Unavailable, c, err)
		g.auditPlan(c, items, start, "", err)
		return nil, err
	}
	subject := any(p.Steps)
	if carry != nil {
		subject = Carry(carry)
	}
	how, err := g.decide(ctx, c, what, items[0].Upstream, subject)
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
	p.ApprovedBy = c.Approver
	return nil, nil
}

// Carried is the carry of a Plan question that c retries with its answer,
// read back from the state the gate sealed for c; nil for none. Plan
// checks the answer, its lapse and its single use when it is passed the
// carry again.
func (g *Gate) Carried(c *call.Call) []byte {
	carry, _ := g.rounds.carried(c)
	return carry
}

// planText lists the gated steps, arguments cut shorter until all fit.
func planText(items []Item) (string, error) {
	for n := MaxSummaryBytes; n >= minStepBytes; n /= 2 {
		if text := planLines(items, n); len(text) <= maxWhat {
			return text, nil
		}
	}
	return "", fmt.Errorf("the plan has %d steps that need approval, too many to show the person in one question: split it into smaller plans", len(items))
}

// planLines lists items, the arguments of each cut to n bytes.
func planLines(items []Item, n int) string {
	var b strings.Builder
	unknown := false // some value is filled in as the plan runs
	for _, it := range items {
		args := summary(it.args, n)
		fmt.Fprintf(&b, "\n- step %s: %s on %s", it.Step, it.Tool, it.Upstream)
		if it.Each != "" {
			fmt.Fprintf(&b, ", once for each element of %s,", it.Each)
		}
		fmt.Fprintf(&b, " with %s", args)
		if strings.Contains(args, "$<<") || it.Each != "" {
			unknown = true
		}
	}
	head := fmt.Sprintf("run a plan with %d step(s) that need approval", len(items))
	if unknown {
		head += " ($<<...>> values are filled in from earlier steps' results as the plan runs: they are not known now)"
	}
	return head + ":" + b.String()
}

// auditPlan records the answer for each gated step: a declined plan makes
// no call, so these records are all that says it was asked.
func (g *Gate) auditPlan(c *call.Call, items []Item, start time.Time, how string, err error) {
	if g.o.Audit == nil {
		return
	}
	for _, it := range items {
		step := &call.Call{Principal: c.Principal, Session: c.Session, Tool: it.Tool, Upstream: it.Upstream, Step: it.Step, Approval: how, Approver: c.Approver}
		r := call.AuditRecord(step, start, nil, err)
		if err == nil {
			r.Outcome = "plan_" + how
		}
		g.o.Audit.Record(r)
	}
}
