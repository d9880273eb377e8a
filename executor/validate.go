package executor

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Problem is one reason a plan is invalid: the step (its id, empty for the
// plan itself or a step without a usable id), the JSON path within it, and
// what is wrong.
type Problem struct {
	Step    string `json:"step,omitempty"`
	Path    string `json:"path,omitempty"`
	Message string `json:"message"`
}

func (p Problem) String() string {
	s := p.Message
	if p.Path != "" {
		s = p.Path + ": " + s
	}
	if p.Step != "" {
		s = fmt.Sprintf("step %q: %s", p.Step, s)
	}
	return s
}

// ValidationError lists every problem of a plan. A plan with one is never
// run.
type ValidationError struct {
	Problems []Problem `json:"problems"`
}

func (e *ValidationError) Error() string {
	if len(e.Problems) == 1 {
		return "invalid plan: " + e.Problems[0].String()
	}
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = p.String()
	}
	return fmt.Sprintf("invalid plan, %d problems:\n%s", len(e.Problems), strings.Join(lines, "\n"))
}

// errNoCatalog is a wiring mistake, not a problem of the plan.
var errNoCatalog = errors.New("executor: Options.Lookup is required, and Options.Caller to run")

// Validate checks a plan against the catalog without calling anything and
// returns its graph, or a *ValidationError listing every problem.
func (e *Executor) Validate(p *Plan) (*Graph, error) {
	if e.opts.Lookup == nil {
		return nil, errNoCatalog
	}
	if p == nil {
		return nil, &ValidationError{Problems: []Problem{{Message: "no plan"}}}
	}
	v := &validator{e: e, p: p}
	g := v.validate()
	if len(v.problems) > 0 {
		return nil, &ValidationError{Problems: v.problems}
	}
	return g, nil
}

// Check validates a plan by its own rules alone (ids, references,
// dependencies, limits), as Validate does against a catalog that has
// every tool and takes any arguments: for plans of tools the gateway does
// not know, such as a client's own.
func Check(p *Plan) error {
	_, err := anyCatalog.Validate(p)
	return err
}

var anyCatalog = New(Options{Lookup: func(name string) (ToolInfo, bool) { return ToolInfo{Name: name}, true }})

// validator holds the state of one Validate.
type validator struct {
	e        *Executor
	p        *Plan
	g        *Graph
	problems []Problem
	named    []bool        // step i has a valid id of its own (not a duplicate)
	output   []*toolSchema // output schema of step i's tool
	items    []any         // schema of step i's foreach elements
}

func (v *validator) add(step int, path, format string, args ...any) {
	pr := Problem{Path: path, Message: fmt.Sprintf(format, args...)}
	switch {
	case step < 0:
	case v.named[step]:
		pr.Step = v.p.Steps[step].ID
	case path == "":
		pr.Path = fmt.Sprintf("steps[%d]", step)
	default:
		pr.Path = fmt.Sprintf("steps[%d].%s", step, path)
	}
	v.problems = append(v.problems, pr)
}

func (v *validator) validate() *Graph {
	p, o := v.p, v.e.opts
	if len(p.Steps) > o.MaxSteps {
		v.add(-1, "steps", "%d steps, more than the limit of %d", len(p.Steps), o.MaxSteps)
		return nil
	}
	v.g = &Graph{index: make(map[string]int, len(p.Steps)), onError: p.OnError, dryRun: p.DryRun}
	v.planLimits()
	v.named = make([]bool, len(p.Steps))
	v.output = make([]*toolSchema, len(p.Steps))
	v.items = make([]any, len(p.Steps))
	v.g.steps = make([]*gstep, len(p.Steps))
	for i := range p.Steps {
		v.g.steps[i] = v.identify(i)
	}
	for i := range p.Steps {
		v.foreach(i)
	}
	for i := range p.Steps {
		v.args(i)
		v.dependsOn(i)
	}
	v.g.output = v.outputTemplate()
	v.g.link()
	for _, c := range v.g.cycles() {
		v.add(c[0], "", "cycle: %s", v.g.cycleText(c))
	}
	if len(v.problems) == 0 {
		v.g.Waves, v.g.Strategy = v.g.shape()
	}
	return v.g
}

func (v *validator) planLimits() {
	p, o, g := v.p, v.e.opts, v.g
	if p.OnError != "" && p.OnError != FailFast && p.OnError != Continue {
		v.add(-1, "on_error", "%q is neither %q nor %q", p.OnError, FailFast, Continue)
	}
	if p.DeadlineMS < 0 {
		v.add(-1, "deadline_ms", "negative (%d)", p.DeadlineMS)
	}
	if p.MaxParallel < 0 {
		v.add(-1, "max_parallel", "negative (%d)", p.MaxParallel)
	}
	g.deadline = min(time.Duration(p.DeadlineMS)*time.Millisecond, o.MaxDeadline)
	if p.DeadlineMS <= 0 {
		g.deadline = o.MaxDeadline
	}
	g.parallel = o.MaxParallel
	if p.MaxParallel > 0 {
		g.parallel = min(p.MaxParallel, o.MaxParallel)
	}
}

// identify checks a step's id, tool and timeout.
func (v *validator) identify(i int) *gstep {
	s, o := v.p.Steps[i], v.e.opts
	gs := &gstep{id: s.ID, tool: s.Tool, timeout: o.StepTimeout}
	switch _, dup := v.g.index[s.ID]; {
	case s.ID == "":
		v.add(i, "id", "missing")
	case !validID(s.ID):
		v.add(i, "id", "%q is not a valid id (letters, digits, _ and -, not starting with a digit, at most 64)", s.ID)
	case s.ID == itemName || s.ID == indexName:
		v.add(i, "id", "%q is reserved for foreach elements", s.ID)
	case dup:
		v.add(i, "id", "duplicate id %q (also steps[%d])", s.ID, v.g.index[s.ID])
	default:
		v.g.index[s.ID] = i
		v.named[i] = true
	}
	switch info, ok := o.Lookup(s.Tool); {
	case s.Tool == "":
		v.add(i, "tool", "missing")
	case !ok:
		v.add(i, "tool", "the catalog has no tool %q%s", s.Tool, o.Explain(s.Tool))
	default:
		gs.upstream = info.Upstream
		gs.input = v.e.schemas.get(info.InputSchema)
		v.output[i] = v.e.schemas.get(info.OutputSchema)
	}
	switch {
	case s.TimeoutMS < 0:
		v.add(i, "timeout_ms", "negative (%d)", s.TimeoutMS)
	case s.TimeoutMS > 0:
		gs.timeout = min(time.Duration(s.TimeoutMS)*time.Millisecond, o.MaxStepTimeout)
	}
	return gs
}

// valueSchema is the schema of step j's value, nil when unknown.
func (v *validator) valueSchema(j int) any {
	out := v.output[j]
	if out == nil {
		return nil
	}
	if v.p.Steps[j].Foreach != nil {
		return map[string]any{"type": "array", "items": out.doc}
	}
	return out.doc
}

// target checks a reference to another step made by step i at path and
// returns that step, or -1. For item and index it checks them instead.
func (v *validator) target(i int, path string, r *ref) (j int, schema any) {
	switch r.step {
	case itemName, indexName:
		if i < 0 || v.p.Steps[i].Foreach == nil {
			v.add(i, path, "%s is only defined in a foreach step", r.src)
			return -1, nil
		}
		if r.step == indexName {
			if len(r.path) > 0 {
				v.add(i, path, "%s: the index is a number, it has no %q", r.src, r.path[0])
			}
			return -1, map[string]any{"type": "integer"}
		}
		return -1, v.pathSchema(i, path, r, v.items[i], "the foreach array's elements")
	}
	j, ok := v.g.index[r.step]
	switch {
	case !ok:
		v.add(i, path, "reference to unknown step %q", r.step)
		return -1, nil
	case j == i:
		v.add(i, path, "%s: a step cannot refer to itself", r.src)
		return -1, nil
	}
	return j, v.pathSchema(i, path, r, v.valueSchema(j), fmt.Sprintf("the output schema of %q (tool %s)", r.step, v.p.Steps[j].Tool))
}

func (v *validator) pathSchema(i int, path string, r *ref, doc any, what string) any {
	sub, err := schemaAt(doc, r.path)
	if err != nil {
		v.add(i, path, "%s cannot exist in %s: %v", r.src, what, err)
	}
	return sub
}

// foreach checks a step's foreach: one reference to an array.
func (v *validator) foreach(i int) {
	raw := v.p.Steps[i].Foreach
	if raw == nil {
		return
	}
	val, err := normalize(raw)
	if err != nil {
		v.add(i, "foreach", "not JSON: %v", err)
		return
	}
	bad := false
	c := compiler{
		onRef: func([]string, *ref, bool) {},
		onErr: func(_ []string, err error) { bad = true; v.add(i, "foreach", "%v", err) },
	}
	t := c.compile(val, []string{"foreach"})
	if t.kind != tRef {
		if !bad {
			v.add(i, "foreach", `must be one reference to an array, like "$<<list>>"`)
		}
		return
	}
	if t.ref.step == itemName || t.ref.step == indexName {
		v.add(i, "foreach", "%s: foreach steps do not nest", t.ref.src)
		return
	}
	j, sub := v.target(i, "foreach", t.ref)
	if j < 0 {
		return
	}
	if types := schemaTypes(sub); !typesMeet(types, []string{"array"}) {
		v.add(i, "foreach", "%s is %s in %q's output schema, not an array", t.ref.src, strings.Join(types, " or "), t.ref.step)
	}
	if m, ok := sub.(map[string]any); ok {
		v.items[i] = m["items"]
	}
	v.g.steps[i].foreach = t.ref
	v.g.steps[i].deps = append(v.g.steps[i].deps, j)
}

// hole is where a reference's value will go in a step's args, with the
// JSON types the producer declares for it.
type hole struct {
	loc    []string
	types  []string
	src    string
	inText bool
}

// args compiles a step's args, checks its references and its literal
// values against the tool's input schema.
func (v *validator) args(i int) {
	s, gs := v.p.Steps[i], v.g.steps[i]
	data, err := json.Marshal(s.Args)
	if err != nil {
		v.add(i, "args", "not JSON: %v", err)
		return
	}
	if len(data) > v.e.opts.MaxArgBytes {
		v.add(i, "args", "%d bytes of JSON, more than the limit of %d", len(data), v.e.opts.MaxArgBytes)
		return
	}
	val := any(map[string]any{})
	if s.Args != nil {
		if val, err = decodeJSON(data); err != nil {
			v.add(i, "args", "not JSON: %v", err)
			return
		}
	}
	var holes []hole
	c := compiler{
		onRef: func(loc []string, r *ref, inText bool) {
			j, sub := v.target(i, formatLoc(loc), r)
			if j >= 0 {
				gs.deps = append(gs.deps, j)
			}
			holes = append(holes, hole{loc: loc[1:], types: schemaTypes(sub), src: r.src, inText: inText})
		},
		onErr: func(loc []string, err error) { v.add(i, formatLoc(loc), "%v", err) },
	}
	gs.args = c.compile(val, []string{"args"})
	gs.hasRefs = len(holes) > 0
	v.inputSchema(i, holes)
}

// inputSchema checks the literal parts of step i's args against its tool's
// input schema, and the declared types of its references.
func (v *validator) inputSchema(i int, holes []hole) {
	gs := v.g.steps[i]
	if gs.input == nil {
		return
	}
	locs := make([][]string, len(holes))
	for k, h := range holes {
		locs[k] = h.loc
		sub, err := schemaAt(gs.input.doc, h.loc)
		want := schemaTypes(sub)
		path := formatLoc(append([]string{"args"}, h.loc...))
		switch {
		case err != nil:
		case h.inText && !typesMeet([]string{"string"}, want):
			v.add(i, path, "%s is interpolated into text, but tool %s wants %s", h.src, gs.tool, strings.Join(want, " or "))
		case !h.inText && !typesMeet(h.types, want):
			v.add(i, path, "%s is %s in its producer's output schema, but tool %s wants %s",
				h.src, strings.Join(h.types, " or "), gs.tool, strings.Join(want, " or "))
		}
	}
	placeholders, _ := gs.args.eval(func(*ref) (any, error) { return nil, nil }, nil, nil)
	for _, pr := range gs.input.check(placeholders, locs) {
		v.add(i, pr.path, "%s (input schema of %s)", pr.msg, gs.tool)
	}
}

// dependsOn checks the explicit dependencies of step i.
func (v *validator) dependsOn(i int) {
	gs := v.g.steps[i]
	for k, id := range v.p.Steps[i].DependsOn {
		j, ok := v.g.index[id]
		switch {
		case !ok:
			v.add(i, fmt.Sprintf("depends_on[%d]", k), "unknown step %q", id)
		case j == i:
			v.add(i, fmt.Sprintf("depends_on[%d]", k), "a step cannot depend on itself")
		default:
			gs.deps = append(gs.deps, j)
		}
	}
}

// outputTemplate compiles the plan's output.
func (v *validator) outputTemplate() *tmpl {
	if v.p.Output == nil {
		return nil
	}
	val, err := normalize(v.p.Output)
	if err != nil {
		v.add(-1, "output", "not JSON: %v", err)
		return nil
	}
	c := compiler{
		onRef: func(loc []string, r *ref, _ bool) { v.target(-1, formatLoc(loc), r) },
		onErr: func(loc []string, err error) { v.add(-1, formatLoc(loc), "%v", err) },
	}
	return c.compile(val, []string{"output"})
}
