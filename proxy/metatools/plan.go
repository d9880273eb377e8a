package metatools

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-router/mcp-router/executor"
	"github.com/mcp-router/mcp-router/internal/clip"
	"github.com/mcp-router/mcp-router/planner"
	"github.com/mcp-router/mcp-router/proxy/call"
	"github.com/mcp-router/mcp-router/routing"
)

// runPlanDef teaches the plan format by example.
var runPlanDef = mcp.Tool{
	Name: RunPlanName,
	Description: `Run several tool calls in one round trip. Steps without dependencies run in parallel; a step that uses
another's result waits for it. Reference a result with "$<<step_id>>" (the whole value, its JSON type kept) or
"$<<step_id.path.0.field>>" (a part of it); inside longer text the value is interpolated; "$$<<" is a literal "$<<".
Example, two lookups in parallel, then a step that uses both:
{"steps": [
  {"id": "a", "tool": "calculator_multiply", "args": {"a": 6, "b": 7}},
  {"id": "b", "tool": "calculator_sqrt", "args": {"x": 16}},
  {"id": "c", "tool": "calculator_add", "args": {"a": "$<<a.result>>", "b": "$<<b.result>>"}}
]}
Optional: "on_error": "fail_fast" (default) or "continue"; "foreach": "$<<step.list>>" runs a step once per element
(use "$<<item>>" and "$<<index>>" in its args); "timeout_ms" per step; "deadline_ms" and "max_parallel" per plan;
"output" to shape the answer from references; "dry_run": true to check a plan without calling anything.
Use exact catalog tool names (call request_more_tools first when you need tools you do not have).
The result lists every step in plan order with its status (succeeded, failed, skipped, cancelled, timed_out)
and its result or error.`,
	RawInputSchema: json.RawMessage(`{"type":"object","properties":{` +
		`"steps":{"type":"array","items":{"type":"object","properties":{` +
		`"id":{"type":"string","description":"Unique step id: letters, digits, _ and -."},` +
		`"tool":{"type":"string","description":"Exact catalog tool name."},` +
		`"args":{"type":"object","description":"The tool's arguments; strings may hold $<<id.path>> references."},` +
		`"depends_on":{"type":"array","items":{"type":"string"}},` +
		`"timeout_ms":{"type":"integer","minimum":1},` +
		`"foreach":{"description":"A reference to an array, e.g. \"$<<search.items>>\"."},` +
		`"purpose":{"type":"string","description":"What the step is for, in words (optional)."}},` +
		`"required":["id","tool"]}},` +
		`"on_error":{"type":"string","enum":["fail_fast","continue"]},` +
		`"deadline_ms":{"type":"integer","minimum":1},` +
		`"max_parallel":{"type":"integer","minimum":1},` +
		`"output":{"description":"Any JSON value; references are resolved after the run."},` +
		`"dry_run":{"type":"boolean"}},"required":["steps"]}`),
	Annotations: mcp.ToolAnnotation{
		Title:        "Run a multi-step tool plan",
		ReadOnlyHint: mcp.ToBoolPtr(false), DestructiveHint: mcp.ToBoolPtr(true),
		IdempotentHint: mcp.ToBoolPtr(false), OpenWorldHint: mcp.ToBoolPtr(true),
	},
}

// planDef asks the local model for a plan (only with ollama.chat_model).
var planDef = mcp.Tool{
	Name: PlanName,
	Description: "Ask the gateway's local planner to decide how to handle a request with the catalog's tools, " +
		"and optionally run the plan it makes (\"execute\": true). The answer says the decision (USE_TOOL, RETRIEVE, " +
		"REASON_ONLY, CLARIFY or ESCALATE), its confidence and the plan.",
	RawInputSchema: json.RawMessage(`{"type":"object","properties":{` +
		`"query":{"type":"string","description":"The user's request, in words."},` +
		`"context":{"type":"string","description":"Anything the planner should know, e.g. earlier results."},` +
		`"execute":{"type":"boolean","description":"Run the plan when the decision is USE_TOOL (not a plan that uses your own tools)."},` +
		`"tools":{"type":"array","description":"Tools to consider besides the routed ones: catalog tool names, or your own tools as {\"name\", \"description\", \"input_schema\"}.",` +
		`"items":{"anyOf":[{"type":"string"},{"type":"object","properties":{"name":{"type":"string"},"description":{"type":"string"},"input_schema":{"type":"object"}},"required":["name"]}]}}},"required":["query"]}`),
	Annotations: mcp.ToolAnnotation{
		Title:        "Plan (and run) a request",
		ReadOnlyHint: mcp.ToBoolPtr(false), DestructiveHint: mcp.ToBoolPtr(true),
		IdempotentHint: mcp.ToBoolPtr(false), OpenWorldHint: mcp.ToBoolPtr(true),
	},
}

func (t *Tools) runPlan(ctx context.Context, c *call.Call, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	raw, err := json.Marshal(req.Params.Arguments)
	if err != nil {
		return mcp.NewToolResultError("run_plan: the plan is not JSON: " + err.Error()), nil
	}
	p, err := executor.Decode(raw)
	if err != nil {
		return mcp.NewToolResultError("run_plan: " + err.Error()), nil
	}
	if i := slices.IndexFunc(planTools(p), t.internal); i >= 0 {
		return internalError("run_plan", p.Steps[i].Tool), nil
	}
	if err := t.await(ctx, planTools(p)); err != nil {
		return t.opts.ErrorResult(err), nil // an upstream of a step is still starting, or down
	}
	res, stop := t.execute(ctx, c, p, nil)
	if stop != nil {
		return stop, nil
	}
	return PlanResult(res), nil
}

func planTools(p *executor.Plan) []string {
	names := make([]string, 0, len(p.Steps))
	for _, st := range p.Steps {
		names = append(names, st.Tool)
	}
	return names
}

// approve asks the person once about a valid plan's gated steps, and
// returns the result that says why it was not run, or nil; carry is what
// p was decoded from, for a stateless-era retry to run unchanged.
func (t *Tools) approve(ctx context.Context, c *call.Call, p *executor.Plan, carry []byte) *mcp.CallToolResult {
	if t.opts.Approvals == nil {
		return nil
	}
	if _, err := t.opts.Executor.Validate(p); err != nil {
		return nil
	}
	ask, err := t.opts.Approvals.Plan(ctx, c, p, carry)
	if err != nil {
		return t.opts.ErrorResult(err)
	}
	return ask
}

// execute has p's gated steps approved, then runs p with progress reports
// and counts it; stop is the result to answer with when it did not run.
func (t *Tools) execute(ctx context.Context, c *call.Call, p *executor.Plan, carry []byte) (res *executor.Result, stop *mcp.CallToolResult) {
	if refused := t.approve(ctx, c, p, carry); refused != nil {
		return nil, refused
	}
	start := time.Now()
	res, err := t.opts.Executor.Run(ctx, p, t.planProgress(ctx, c))
	if err != nil {
		return nil, planError(err)
	}
	if res.DryRun || t.opts.Metrics == nil {
		return res, nil
	}
	statuses := map[string]int{}
	for _, st := range res.Steps {
		statuses[string(st.Status)]++
	}
	t.opts.Metrics.PlanDone(string(res.Strategy), time.Since(start), statuses)
	return res, nil
}

// planError renders a plan that could not run for the model to correct.
func planError(err error) *mcp.CallToolResult {
	res := mcp.NewToolResultError("run_plan: the plan was not run: " + err.Error())
	var ve *executor.ValidationError
	if errors.As(err, &ve) {
		res.StructuredContent = map[string]any{"error": map[string]any{"kind": "invalid_plan", "problems": ve.Problems}}
	}
	return res
}

// PlanResult renders an executed plan: a line per step, the whole Result
// as structuredContent; an error when a step failed or timed out.
func PlanResult(r *executor.Result) *mcp.CallToolResult {
	var b strings.Builder
	fmt.Fprintf(&b, "Plan %s", r.Strategy)
	if r.DryRun {
		b.WriteString(" (dry run: valid, nothing called)")
	}
	b.WriteString(":\n")
	failed := false
	for _, st := range r.Steps {
		fmt.Fprintf(&b, "- %s (%s): %s", st.ID, st.Tool, st.Status)
		switch {
		case st.Error != "":
			fmt.Fprintf(&b, ": %s", st.Error)
		case st.Status == executor.Succeeded:
			fmt.Fprintf(&b, ": %s", compactValue(st.Result))
		}
		b.WriteString("\n")
		failed = failed || st.Status == executor.Failed || st.Status == executor.TimedOut
	}
	if r.Output != nil {
		fmt.Fprintf(&b, "output: %s\n", compactValue(r.Output))
	}
	res := mcp.NewToolResultText(strings.TrimSpace(b.String()))
	res.StructuredContent = r
	res.IsError = failed
	return res
}

func compactValue(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return clip.Ellipsis(string(b), 2000)
}

// planProgress reports steps done to a client that asked for progress.
func (t *Tools) planProgress(ctx context.Context, c *call.Call) func(done, total int) {
	if c.Meta == nil || c.Meta.ProgressToken == nil || t.opts.Client == nil {
		return nil
	}
	return func(done, total int) { t.opts.Client.Progress(ctx, c, done, total) }
}

// plannerCandidates is how many of the ranked tools the planner may use.
const plannerCandidates = 10

// planRequest asks the planner about query with the router's candidates.
func (t *Tools) planRequest(ctx context.Context, c *call.Call, query, context string) planner.Request {
	var d routing.Decision
	rate := -1.0
	if t.belts != nil {
		sess := t.belts.session(c)
		d = t.opts.Decisions.Preview(ctx, sess, routing.Request{Principal: c.Who(), Query: query, Exclude: IsOwn})
		rate = sess.SuccessRate()
	}
	req := PlannerRequest(t.opts.Catalog, d, query, context)
	req.SuccessRate = rate
	return req
}

// PlannerRequest hands the planner the routed tools and the best ranked
// ones, with their calibrated scores.
func PlannerRequest(c Catalog, d routing.Decision, query, context string) planner.Request {
	req := planner.Request{Query: query, Context: context, SuccessRate: -1}
	seen := map[string]bool{}
	for _, cand := range append(slices.Clone(d.Selected), d.Ranked[:min(plannerCandidates, len(d.Ranked))]...) {
		t, ok := c.Tool(cand.Name)
		if !ok || seen[cand.Name] {
			continue
		}
		seen[cand.Name] = true
		req.Tools = append(req.Tools, planner.Tool{Name: t.Name, Description: t.Def.Description,
			InputSchema: t.Def.RawInputSchema, OutputSchema: t.Def.RawOutputSchema, Score: cand.Score})
	}
	return req
}

func (t *Tools) plan(ctx context.Context, c *call.Call, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	query, pctx := req.GetString("query", ""), req.GetString("context", "")
	if res := cmp.Or(tooLong(PlanName, "query", query, t.opts.Inputs.MaxQueryBytes),
		tooLong(PlanName, "context", pctx, t.opts.Inputs.MaxContextBytes)); res != nil {
		return res, nil
	}
	if query = strings.TrimSpace(query); query == "" {
		return mcp.NewToolResultError(`plan needs "query": the user's request in words`), nil
	}
	if err := t.await(ctx, namedTools(req.GetArguments()["tools"])); err != nil {
		return t.opts.ErrorResult(fmt.Errorf("plan: %w", err)), nil // a tool of an upstream still starting, or down
	}
	own, err := t.planTools(query, req.GetArguments()["tools"])
	if err != nil {
		return mcp.NewToolResultError("plan: " + err.Error()), nil
	}
	dec, carry := t.decide(ctx, c, query, pctx, own)
	out := map[string]any{"decision": dec}
	text := decisionText(dec)
	if len(dec.OwnTools) > 0 {
		text += fmt.Sprintf("\n\nThe plan uses your own tools (%s): run it yourself; the gateway runs only its catalog's tools.",
			strings.Join(dec.OwnTools, ", "))
	}
	if req.GetBool("execute", false) && dec.Decision == planner.UseTool && len(dec.OwnTools) == 0 {
		p, err := executor.Decode(dec.Plan)
		if err != nil {
			return planError(err), nil
		}
		res, stop := t.execute(ctx, c, p, carry)
		if stop != nil {
			return stop, nil
		}
		pr := PlanResult(res)
		out["result"] = res
		if failed := planner.Failures(res); len(failed) > 0 { // a failed step escalates the decision
			dec = t.opts.Planner.AfterRun(dec, failed)
			out["decision"] = dec
			text = decisionText(dec)
		}
		text += "\n\n" + pr.Content[0].(mcp.TextContent).Text
	}
	res := mcp.NewToolResultText(text)
	res.StructuredContent = out
	return res, nil
}

// decide asks the planner about query with the routed tools and own, and
// returns its decision and the decision's JSON: a stateless-era question
// about its plan carries that JSON, and the retry that answers it gets the
// same decision back, not a new one (a model words each plan its own
// way, and the person approved this one).
func (t *Tools) decide(ctx context.Context, c *call.Call, query, pctx string, own []planner.Tool) (planner.Decision, []byte) {
	if t.opts.Approvals != nil {
		var dec planner.Decision
		if carry := t.opts.Approvals.Carried(c); carry != nil && json.Unmarshal(carry, &dec) == nil && dec.Query == query {
			return dec, carry
		}
	}
	preq := t.planRequest(ctx, c, query, pctx)
	for _, o := range own {
		if i := slices.IndexFunc(preq.Tools, func(r planner.Tool) bool { return r.Name == o.Name }); i >= 0 {
			preq.Tools[i].Score = max(preq.Tools[i].Score, o.Score)
			continue
		}
		preq.Tools = append(preq.Tools, o)
	}
	dec := t.opts.Planner.Decide(ctx, preq)
	if c.Era != call.Stateless {
		return dec, nil
	}
	carry, err := json.Marshal(dec)
	if err != nil || len(carry) > maxCarryBytes {
		carry = nil // the retry asks the planner again
	}
	return dec, carry
}

// maxCarryBytes bounds the decision a stateless-era question carries to
// the client and back in its state.
const maxCarryBytes = 64 << 10

func decisionText(d planner.Decision) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Decision: %s (confidence %.2f, %s)", d.Decision, d.Confidence, d.Level)
	if d.Reasoning != "" {
		fmt.Fprintf(&b, "\nReasoning: %s", d.Reasoning)
	}
	switch d.Decision {
	case planner.UseTool:
		fmt.Fprintf(&b, "\nPlan (%s): %s\nRun it with run_plan, or call plan again with \"execute\": true.", d.Strategy, d.Plan)
	case planner.Clarify:
		fmt.Fprintf(&b, "\nAsk the user: %s", d.ClarifyingQuestion)
	case planner.Escalate:
		fmt.Fprintf(&b, "\nEscalate: %s", d.EscalationReason)
	case planner.Retrieve:
		b.WriteString("\nNo listed tool fits: call request_more_tools with the request.")
	}
	return b.String()
}
