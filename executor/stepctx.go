package executor

import "context"

type stepKey struct{}

type stepMark struct {
	plan, step string
	approved   bool // the step is in its plan's Approved
}

// StepOf says which plan run and step a Caller's call belongs to: the
// run's id (as in its log lines, plan_id) and the step's id.
func StepOf(ctx context.Context) (plan, step string, ok bool) {
	m, ok := ctx.Value(stepKey{}).(stepMark)
	return m.plan, m.step, ok
}

// StepApproved says that a Caller's call is a step of a plan whose
// Approved lists it: the person approved it before the plan ran.
func StepApproved(ctx context.Context) bool {
	m, _ := ctx.Value(stepKey{}).(stepMark)
	return m.approved
}
