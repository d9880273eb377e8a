package planner

import (
	"fmt"
	"maps"
	"strings"

	"github.com/mcp-router/mcp-router/executor"
)

// StepFailure is a step of a decision's plan that failed when it ran: its
// id, its tool and the error the model reads.
type StepFailure struct {
	Step, Tool, Error string
}

// Failures are the steps of r that failed or timed out.
func Failures(r *executor.Result) []StepFailure {
	var failed []StepFailure
	for _, s := range r.Steps {
		if s.Status == executor.Failed || s.Status == executor.TimedOut {
			failed = append(failed, StepFailure{Step: s.ID, Tool: s.Tool, Error: s.Error})
		}
	}
	return failed
}

// AfterRun is d once its plan has run: unchanged when no step failed,
// else an ESCALATE with reason tool_failure naming the failed steps (every
// step is critical), no longer a success.
func (p *Planner) AfterRun(d Decision, failed []StepFailure) Decision {
	if len(failed) == 0 {
		return d
	}
	parts := make([]string, len(failed))
	for i, f := range failed {
		parts[i] = fmt.Sprintf("step %s (%s): %s", f.Step, f.Tool, f.Error)
	}
	if d.TotalSteps > 0 {
		d.Factors = maps.Clone(d.Factors)
		if d.Factors == nil {
			d.Factors = map[string]float64{}
		}
		d.Factors[FactorToolSuccessRate] = clamp01(float64(d.TotalSteps-len(failed)) / float64(d.TotalSteps))
	}
	d.Decision, d.Strategy, d.Plan, d.Success = Escalate, NoTool, nil, false
	d.TotalSteps, d.ExecutionSequence, d.OwnTools, d.PotentialIssues = 0, "", nil, nil
	d.EscalationReason = ReasonToolFailure + ": " + strings.Join(parts, "; ")
	return p.settle(d)
}
