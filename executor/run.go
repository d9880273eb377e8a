package executor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// Run validates p and runs it, calling progress (when not nil, and always
// from Run's own goroutine) with the number of finished steps, skipped ones
// included, after each step finishes. It returns a
// *ValidationError, having made no call, when p is invalid. Step failures
// are in the Result (see Result.Err); the error is otherwise only set when
// ctx ended before the plan did, with the partial Result beside it.
func (e *Executor) Run(ctx context.Context, p *Plan, progress func(done, total int)) (*Result, error) {
	if e.opts.Caller == nil {
		return nil, errNoCatalog
	}
	g, err := e.Validate(p)
	if err != nil {
		return nil, err
	}
	res := &Result{Strategy: g.Strategy, Waves: g.Waves, Steps: make([]StepResult, len(g.steps)), errs: make([]error, len(g.steps))}
	for i, s := range g.steps {
		res.Steps[i] = StepResult{ID: s.id, Tool: s.tool, Status: Skipped}
	}
	if g.dryRun {
		res.DryRun = true
		return res, nil
	}
	r := newRun(e, g, res, progress)
	r.approved, r.approvedBy = p.Approved, p.ApprovedBy
	start := time.Now()
	r.loop(ctx)
	r.resolveOutput()
	e.log.Debug("plan done", "plan_id", r.id, "strategy", g.Strategy, "steps", len(g.steps), "dur", time.Since(start))
	if errors.Is(r.stopped, context.Canceled) || errors.Is(r.stopped, context.DeadlineExceeded) {
		return res, fmt.Errorf("running plan: %w", r.stopped)
	}
	return res, nil
}

// errPlanDeadline and errStepDeadline are the causes of the two deadlines.
var (
	errPlanDeadline = errors.New("plan deadline exceeded")
	errStepDeadline = errors.New("step deadline exceeded")
)

// failure cancels the rest of a fail_fast plan.
type failure struct{ step string }

func (f *failure) Error() string { return fmt.Sprintf("step %q failed", f.step) }

// phase is where a step is in its run.
type phase uint8

const (
	waiting  phase = iota // for dependencies
	queued                // ready; calls left to start
	started               // every call started
	finished              // has its status
)

// stepRun is the scheduler's state of one step.
type stepRun struct {
	phase     phase
	remaining int // dependencies not finished yet
	began     time.Time
	ctx       context.Context         // for the step's calls
	cancel    context.CancelCauseFunc // of a foreach step's ctx, to stop its elements
	inflight  int
	items     []any // foreach: the elements; values gets one value each
	values    []any
	next      int    // foreach: next element to start
	failed    *event // foreach: the first element that did not succeed
}

// event is the outcome of one call, sent to the scheduler.
type event struct {
	step, elem int // elem is -1 outside foreach
	status     Status
	value      any
	err        error
}

// run is one execution of a graph. Only the goroutine in loop touches its
// fields; call goroutines read the graph, the results of finished steps
// (written before their dependants start) and their own arguments, and
// send one event each.
type run struct {
	e        *Executor
	g        *Graph
	res      *Result
	progress func(done, total int)
	id       string
	log      *slog.Logger

	ctx     context.Context // the plan's: deadline, and cancelled by fail_fast
	cancel  context.CancelCauseFunc
	events  chan event
	steps   []stepRun
	queue   []int // steps with calls to start, in the order they became ready
	running int
	perUp   map[string]int
	stopped error // why the plan stopped starting steps, once it has
	done    int

	calls      int         // counted as steps become ready, foreach elements each
	expanded   *byteBudget // arguments of the calls, shared by their goroutines
	kept       int         // bytes of the values kept for the result
	approved   []string    // the plan's Approved steps
	approvedBy string      // and its ApprovedBy
}

func newRun(e *Executor, g *Graph, res *Result, progress func(done, total int)) *run {
	id := fmt.Sprintf("%08x", rand.Uint32())
	return &run{
		e: e, g: g, res: res, progress: progress, id: id,
		log:      e.log.With("plan_id", id),
		events:   make(chan event, g.parallel),
		steps:    make([]stepRun, len(g.steps)),
		perUp:    make(map[string]int),
		expanded: &byteBudget{max: int64(e.opts.MaxExpandedBytes)},
	}
}

// loop runs the plan: it starts calls while the limits allow, and handles
// each call's end until none is running. It returns after every call it
// started has returned.
func (r *run) loop(parent context.Context) {
	dctx, cancelDeadline := context.WithTimeoutCause(parent, r.g.deadline, errPlanDeadline)
	defer cancelDeadline()
	r.ctx, r.cancel = context.WithCancelCause(dctx)
	defer r.cancel(nil)
	for i, s := range r.g.steps {
		r.steps[i].remaining = len(s.deps)
	}
	for i, s := range r.g.steps {
		if len(s.deps) == 0 {
			r.ready(i)
		}
	}
	done := r.ctx.Done()
	for {
		r.launch()
		if r.running == 0 {
			break
		}
		select {
		case ev := <-r.events:
			r.handle(ev)
		case <-done:
			done = nil
			r.stop(r.why())
		}
	}
	if r.stopped == nil && r.ctx.Err() != nil {
		r.stop(r.why())
	}
}

// why is the reason the plan's context ended: its deadline, fail_fast, or
// the caller's ctx.
func (r *run) why() error {
	cause := context.Cause(r.ctx)
	if errors.Is(cause, context.Canceled) || errors.Is(cause, context.DeadlineExceeded) {
		return fmt.Errorf("the caller stopped the plan (%w)", cause)
	}
	return cause
}

// ready queues step i, whose dependencies all succeeded. A foreach step
// finds its elements here.
func (r *run) ready(i int) {
	st, gs := &r.steps[i], r.g.steps[i]
	if gs.foreach != nil {
		v, err := r.lookup(gs.foreach)
		items, isArray := v.([]any)
		switch {
		case err != nil:
			r.finish(i, Failed, nil, fmt.Errorf("foreach: %s: %w", gs.foreach.src, err))
			return
		case !isArray:
			r.finish(i, Failed, nil, fmt.Errorf("foreach: %s is %s, not an array", gs.foreach.src, jsonKind(v)))
			return
		case len(items) == 0:
			r.finish(i, Succeeded, []any{}, nil)
			return
		case len(items) > r.e.opts.MaxForeachItems:
			r.finish(i, Failed, nil, fmt.Errorf("foreach: %s: %w: %d elements, more than %d", gs.foreach.src, ErrLimit, len(items), r.e.opts.MaxForeachItems))
			return
		}
		st.items, st.values = items, make([]any, len(items))
	}
	if r.calls += max(1, len(st.items)); r.calls > r.e.opts.MaxCalls {
		r.finish(i, Failed, nil, fmt.Errorf("%w: the plan would make more than %d calls", ErrLimit, r.e.opts.MaxCalls))
		return
	}
	st.phase = queued
	r.queue = append(r.queue, i)
}

// launch starts every call the limits allow, in the order steps became
// ready; a step whose upstream is busy does not hold up the others.
func (r *run) launch() {
	if r.stopped == nil && r.ctx.Err() != nil {
		r.stop(r.why())
	}
	if r.stopped != nil {
		return
	}
	kept := r.queue[:0]
	for _, i := range r.queue {
		for r.canStart(i) {
			r.start(i)
		}
		if r.steps[i].phase == queued {
			kept = append(kept, i)
		}
	}
	r.queue = kept
}

func (r *run) canStart(i int) bool {
	st, gs := &r.steps[i], r.g.steps[i]
	if st.phase != queued || r.running >= r.g.parallel || r.perUp[gs.upstream] >= r.e.opts.PerUpstream {
		return false
	}
	return gs.foreach == nil || st.inflight < r.e.opts.ForeachWidth
}

// start starts one call of step i: the step, or its next element.
func (r *run) start(i int) {
	st, gs := &r.steps[i], r.g.steps[i]
	if st.began.IsZero() {
		st.began = time.Now()
		st.ctx = r.ctx
		if gs.foreach != nil { // its own, to stop its other elements when one fails
			st.ctx, st.cancel = context.WithCancelCause(r.ctx)
		}
	}
	elem, item := -1, any(nil)
	if gs.foreach != nil {
		elem, item = st.next, st.items[st.next]
		st.next++
	}
	if gs.foreach == nil || st.next == len(st.items) {
		st.phase = started
	}
	st.inflight++
	r.running++
	r.perUp[gs.upstream]++
	go r.call(st.ctx, i, elem, item)
}

// call makes one call and sends its event. It never panics.
func (r *run) call(ctx context.Context, i, elem int, item any) {
	gs := r.g.steps[i]
	ev := event{step: i, elem: elem}
	defer func() {
		if p := recover(); p != nil {
			r.log.Error("step panicked", "step", gs.id, "tool", gs.tool, "panic", p, "stack", string(debug.Stack()))
			ev.status, ev.value, ev.err = Failed, nil, errors.New("internal error")
		}
		r.events <- ev
	}()
	args, err := r.args(gs, elem, item)
	if err != nil {
		ev.status, ev.err = Failed, err
		return
	}
	cctx, cancel := context.WithTimeoutCause(ctx, gs.timeout, errStepDeadline)
	defer cancel()
	mark := stepMark{plan: r.id, step: gs.id}
	if slices.Contains(r.approved, gs.id) {
		mark.approved, mark.approver = true, r.approvedBy
	}
	cctx = context.WithValue(cctx, stepKey{}, mark)
	res, err := r.e.opts.Caller.CallTool(cctx, gs.tool, args)
	ev.status, ev.value, ev.err = outcome(cctx, gs.timeout, res, err)
}

// args fills in a step's arguments and, when they came from references,
// checks them against the tool's input schema.
func (r *run) args(gs *gstep, elem int, item any) (any, error) {
	resolve := r.lookup
	if gs.foreach != nil {
		resolve = func(ref *ref) (any, error) {
			switch ref.step {
			case itemName:
				return lookupPath(item, ref.path)
			case indexName:
				return elem, nil
			}
			return r.lookup(ref)
		}
	}
	tb := &textBudget{perText: r.e.opts.MaxTextBytes, left: r.expanded.left(), planMax: r.e.opts.MaxExpandedBytes}
	args, err := gs.args.eval(resolve, nil, tb)
	if err != nil {
		return nil, err
	}
	if size := jsonSize(args, r.expanded.left()); !r.expanded.take(size) {
		return nil, fmt.Errorf("%w: arguments with references filled in over the plan's limit of %d bytes", ErrLimit, r.e.opts.MaxExpandedBytes)
	}
	if !gs.hasRefs {
		return args, nil
	}
	probs := gs.input.check(args, nil)
	if len(probs) == 0 {
		return args, nil
	}
	msgs := make([]string, len(probs))
	for k, pr := range probs {
		msgs[k] = pr.path + ": " + pr.msg
	}
	return nil, fmt.Errorf("%s (input schema of %s)", strings.Join(msgs, "; "), gs.tool)
}

// lookup is the value of a reference to a step that succeeded.
func (r *run) lookup(ref *ref) (any, error) {
	return lookupPath(r.res.Steps[r.g.index[ref.step]].Result, ref.path)
}

// outcome turns what a call returned into a status, a value and an error.
// A call that failed once its context was done timed out or was cancelled.
func outcome(ctx context.Context, timeout time.Duration, res *mcp.CallToolResult, err error) (Status, any, error) {
	if err == nil && res == nil {
		err = errors.New("no result")
	}
	if err == nil && !res.IsError {
		v, verr := resultValue(res)
		if verr != nil {
			return Failed, nil, fmt.Errorf("reading result: %w", verr)
		}
		return Succeeded, v, nil
	}
	if ctx.Err() != nil {
		if cause := context.Cause(ctx); !errors.Is(cause, errStepDeadline) {
			return Cancelled, nil, fmt.Errorf("cancelled: %w", cause)
		}
		return TimedOut, nil, fmt.Errorf("%w after %s", ErrStepTimeout, timeout)
	}
	if err != nil {
		return Failed, nil, err
	}
	if text, _ := resultText(res); text != "" {
		return Failed, nil, errors.New(text)
	}
	return Failed, nil, errors.New("the tool reported an error without text")
}

// handle takes the end of one call.
func (r *run) handle(ev event) {
	st, gs := &r.steps[ev.step], r.g.steps[ev.step]
	if ev.status == Cancelled && r.ctx.Err() != nil {
		r.stop(r.why())
		ev.err = fmt.Errorf("cancelled: %w", r.stopped)
	}
	r.running--
	r.perUp[gs.upstream]--
	st.inflight--
	if ev.status == Succeeded {
		ev = r.keep(ev)
	}
	if gs.foreach == nil {
		r.finish(ev.step, ev.status, ev.value, ev.err)
		return
	}
	if ev.status == Succeeded {
		st.values[ev.elem] = ev.value
	} else if st.failed == nil {
		ev.err = fmt.Errorf("element %d: %w", ev.elem, ev.err)
		st.failed = &ev
		st.cancel(ev.err)
		st.phase = started // no more elements
	}
	if st.inflight > 0 || st.phase == queued {
		return
	}
	switch {
	case st.failed != nil:
		r.finish(ev.step, st.failed.status, nil, st.failed.err)
	case st.next < len(st.items): // the plan stopped before every element ran
		r.finish(ev.step, Cancelled, nil, fmt.Errorf("cancelled: %w", r.stopped))
	default:
		r.finish(ev.step, Succeeded, st.values, nil)
	}
}

// finish records step i's end and moves the plan on: dependants of a
// success may become ready; a failure stops the plan (fail_fast) or skips
// what depends on it (continue).
func (r *run) finish(i int, status Status, value any, err error) {
	st, gs := &r.steps[i], r.g.steps[i]
	st.phase = finished
	if st.cancel != nil {
		st.cancel(nil)
	}
	sr := &r.res.Steps[i]
	sr.Status = status
	r.res.errs[i] = err
	if err != nil {
		sr.Error = err.Error()
	}
	if !st.began.IsZero() {
		d := time.Since(st.began)
		sr.DurationMS = float64(d) / float64(time.Millisecond)
		r.log.Debug("step done", "step", gs.id, "tool", gs.tool, "status", status, "dur", d)
	}
	if status == Succeeded {
		sr.Result = value
	}
	r.done++
	if r.progress != nil {
		r.progress(r.done, len(r.g.steps))
	}
	switch {
	case status == Succeeded:
		for _, d := range gs.dependants {
			if r.steps[d].remaining--; r.steps[d].remaining == 0 && r.steps[d].phase == waiting {
				r.ready(d)
			}
		}
	case r.stopped != nil: // stop has skipped every step waiting
	case status == Skipped || status == Cancelled || r.g.onError == Continue:
		r.skipDependants(i)
	default:
		r.stop(&failure{step: gs.id})
	}
}

// skipDependants skips every step that waits on step i.
func (r *run) skipDependants(i int) {
	for _, d := range r.g.steps[i].dependants {
		if r.steps[d].phase == waiting {
			r.finish(d, Skipped, nil, fmt.Errorf("not run: it depends on %q, which %s", r.g.steps[i].id, r.res.Steps[i].Status))
		}
	}
}

// stop ends the plan early: the running calls are cancelled and nothing
// else starts; steps not started are skipped.
func (r *run) stop(cause error) {
	if r.stopped != nil {
		return
	}
	r.stopped = cause
	r.cancel(cause)
	for i := range r.steps {
		st := &r.steps[i]
		switch {
		case st.phase == finished || st.inflight > 0:
		case !st.began.IsZero(): // a foreach step between elements
			r.finish(i, Cancelled, nil, fmt.Errorf("cancelled: %w", cause))
		default:
			r.finish(i, Skipped, nil, fmt.Errorf("not run: %w", cause))
		}
	}
	for i := range r.steps {
		if r.steps[i].phase == queued {
			r.steps[i].phase = started
		}
	}
	r.queue = nil
}

// resolveOutput fills in the plan's output from the steps that succeeded;
// what cannot be resolved becomes null, with the reason in OutputErrors.
func (r *run) resolveOutput() {
	if r.g.output == nil {
		return
	}
	resolve := func(ref *ref) (any, error) {
		i := r.g.index[ref.step]
		if s := r.res.Steps[i].Status; s != Succeeded {
			return nil, fmt.Errorf("step %q %s", ref.step, s)
		}
		return r.lookup(ref)
	}
	tb := &textBudget{perText: r.e.opts.MaxTextBytes, left: r.e.opts.MaxResultBytes, planMax: r.e.opts.MaxResultBytes}
	out, err := r.g.output.eval(resolve, func(err error) {
		r.res.OutputErrors = append(r.res.OutputErrors, err.Error())
	}, tb)
	if err == nil && jsonSize(out, r.e.opts.MaxResultBytes) > r.e.opts.MaxResultBytes {
		err = fmt.Errorf("%w: the output over %d bytes", ErrLimit, r.e.opts.MaxResultBytes)
	}
	if err != nil {
		r.res.OutputErrors = append(r.res.OutputErrors, "output: "+err.Error())
		return
	}
	r.res.Output = out
}

// keep counts the value of a call that succeeded against the plan's result
// limit; past it, the call fails and its value is dropped.
func (r *run) keep(ev event) event {
	left := r.e.opts.MaxResultBytes - r.kept
	size := jsonSize(ev.value, left)
	if size > left {
		return event{step: ev.step, elem: ev.elem, status: Failed,
			err: fmt.Errorf("%w: the plan's results over %d bytes", ErrLimit, r.e.opts.MaxResultBytes)}
	}
	r.kept += size
	return ev
}

type stepKey struct{}

type stepMark struct {
	plan, step string
	approved   bool   // the step is in its plan's Approved
	approver   string // and its plan's ApprovedBy
}

// StepOf says which plan run and step a Caller's call belongs to: the
// run's id (as in its log lines, plan_id) and the step's id.
func StepOf(ctx context.Context) (plan, step string, ok bool) {
	m, ok := ctx.Value(stepKey{}).(stepMark)
	return m.plan, m.step, ok
}

// StepApproval says that a Caller's call is a step of a plan whose
// Approved lists it (the person approved it before the plan ran), and
// who approved it in the console, if one did (the plan's ApprovedBy).
func StepApproval(ctx context.Context) (approved bool, by string) {
	m, _ := ctx.Value(stepKey{}).(stepMark)
	return m.approved, m.approver
}
