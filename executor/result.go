package executor

import (
	"errors"
	"fmt"
)

// Status is how a step ended.
type Status string

// Statuses of a step.
const (
	Succeeded Status = "succeeded"
	Failed    Status = "failed"
	Skipped   Status = "skipped"   // never started: a dependency failed, the plan stopped, or dry_run
	Cancelled Status = "cancelled" // started, then stopped by fail_fast, the plan deadline or the caller
	TimedOut  Status = "timed_out" // a call passed its own deadline
)

// Strategy is the shape of a validated plan's graph (decision 7 in docs/design.md).
type Strategy string

// Strategies, from the graph: no step, one step, no edges, one path through
// every step, anything else.
const (
	NoTool          Strategy = "NO_TOOL"
	SingleTool      Strategy = "SINGLE_TOOL"
	ParallelTools   Strategy = "PARALLEL_TOOLS"
	SequentialTools Strategy = "SEQUENTIAL_TOOLS"
	HybridTools     Strategy = "HYBRID_TOOLS"
)

// Result is the outcome of a plan: every step, in plan order.
type Result struct {
	Strategy Strategy     `json:"strategy"`
	Waves    [][]string   `json:"waves"` // topological levels, for display
	Steps    []StepResult `json:"steps"`
	Output   any          `json:"output,omitempty"`
	// OutputErrors says why parts of Output are null, e.g.
	// `output.total: step "sum" failed`.
	OutputErrors []string `json:"output_errors,omitempty"`
	DryRun       bool     `json:"dry_run,omitempty"`

	errs []error // per step, behind StepResult.Error
}

// StepResult is the outcome of one step.
type StepResult struct {
	ID         string  `json:"id"`
	Tool       string  `json:"tool"`
	Status     Status  `json:"status"`
	Result     any     `json:"result,omitempty"` // the step's value, when it succeeded
	Error      string  `json:"error,omitempty"`
	DurationMS float64 `json:"duration_ms"`
}

// StepError is why one step failed.
type StepError struct {
	Step, Tool string
	Err        error
}

func (e *StepError) Error() string {
	return fmt.Sprintf("step %q (%s): %v", e.Step, e.Tool, e.Err)
}

func (e *StepError) Unwrap() error { return e.Err }

// ErrStepTimeout is wrapped by the error of a step that timed out.
var ErrStepTimeout = errors.New("timed out")

// Err joins a *StepError for each step that failed or timed out, or is nil.
// Steps cancelled or skipped because of those are not repeated.
func (r *Result) Err() error {
	var errs []error
	for i, s := range r.Steps {
		if (s.Status == Failed || s.Status == TimedOut) && i < len(r.errs) && r.errs[i] != nil {
			errs = append(errs, &StepError{Step: s.ID, Tool: s.Tool, Err: r.errs[i]})
		}
	}
	return errors.Join(errs...)
}
