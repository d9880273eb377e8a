package executor

import "context"

type stepKey struct{}

type stepMark struct{ plan, step string }

// StepOf says which plan run and step a Caller's call belongs to: the
// run's id (as in its log lines, plan_id) and the step's id.
func StepOf(ctx context.Context) (plan, step string, ok bool) {
	m, ok := ctx.Value(stepKey{}).(stepMark)
	return m.plan, m.step, ok
}
