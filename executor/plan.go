package executor

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
)

// Plan is a multi-step tool plan as a model or the planner writes it.
type Plan struct {
	Steps       []Step `json:"steps"`
	OnError     string `json:"on_error,omitempty"`     // "fail_fast" (default) or "continue"
	DeadlineMS  int    `json:"deadline_ms,omitempty"`  // whole plan; 0 means Options.MaxDeadline
	MaxParallel int    `json:"max_parallel,omitempty"` // 0 means Options.MaxParallel, which also caps it
	Output      any    `json:"output,omitempty"`       // may hold references, resolved after the run
	DryRun      bool   `json:"dry_run,omitempty"`      // validate only, call nothing
	// Approved are the ids of the steps a person approved (the approval
	// gate sets it); never read from JSON, so no plan approves itself.
	Approved []string `json:"-"`
	// ApprovedBy is the principal that approved them in the console, if
	// one did; each approved step's call carries it (StepApproval).
	ApprovedBy string `json:"-"`
}

// Step is one tool call of a plan.
type Step struct {
	ID        string         `json:"id"`
	Tool      string         `json:"tool"`
	Args      map[string]any `json:"args,omitempty"`
	DependsOn []string       `json:"depends_on,omitempty"` // besides the steps its references name
	TimeoutMS int            `json:"timeout_ms,omitempty"` // per call; 0 means Options.StepTimeout
	Foreach   any            `json:"foreach,omitempty"`    // a reference to an array: run once per element
	// Purpose says what the step is for; it documents, and is not run.
	Purpose string `json:"purpose,omitempty"`
}

// Values of Plan.OnError.
const (
	FailFast = "fail_fast"
	Continue = "continue"
)

var (
	planKeys = []string{"steps", "on_error", "deadline_ms", "max_parallel", "output", "dry_run"}
	stepKeys = []string{"id", "tool", "args", "depends_on", "timeout_ms", "foreach", "purpose"}
)

// Decode reads a plan from JSON strictly: every unknown key is an error
// naming it and where it is, and so is anything after the plan. Numbers in
// args and output are kept as json.Number.
func Decode(data []byte) (*Plan, error) {
	if err := unknownKeys(data); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	dec.DisallowUnknownFields()
	var p Plan
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("decoding plan: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("decoding plan: data after the plan object")
	}
	return &p, nil
}

// unknownKeys reports every key of the plan and its steps that Plan and
// Step do not have. Shapes it cannot read are left to the full decode.
func unknownKeys(data []byte) error {
	var top map[string]json.RawMessage
	if json.Unmarshal(data, &top) != nil {
		return nil
	}
	var errs []error
	for _, k := range sortedKeys(top) {
		if !slices.Contains(planKeys, k) {
			errs = append(errs, fmt.Errorf("plan: unknown key %q (want %s)", k, strings.Join(planKeys, ", ")))
		}
	}
	var steps []map[string]json.RawMessage
	if raw, ok := top["steps"]; ok && json.Unmarshal(raw, &steps) == nil {
		for i, s := range steps {
			for _, k := range sortedKeys(s) {
				if !slices.Contains(stepKeys, k) {
					errs = append(errs, fmt.Errorf("steps[%d]: unknown key %q (want %s)", i, k, strings.Join(stepKeys, ", ")))
				}
			}
		}
	}
	return errors.Join(errs...)
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

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
