package audit

import (
	"context"
	"time"
)

// Record is one tool call.
type Record struct {
	Time time.Time `json:"time"`
	// Principal is who called: a bearer token's fingerprint, or "local".
	Principal string `json:"principal"`
	Session   string `json:"session,omitempty"`
	Tool      string `json:"tool"`
	Upstream  string `json:"upstream,omitempty"`
	// Plan and Step name the run_plan run and its step, for a plan's calls.
	Plan string `json:"plan,omitempty"`
	Step string `json:"step,omitempty"`
	// Outcome is "ok", "tool_error" (the tool answered isError) or the
	// kind of failure (upstream_timeout, quota_exceeded, ...).
	Outcome string `json:"outcome"`
	// Approval says how a call that approvals gate went on (approved,
	// approved_with_plan, approved_in_console, allowed_unasked); "" for a
	// call not gated, or one refused (its Outcome says why).
	Approval string `json:"approval,omitempty"`
	// Approver is the principal that answered for the call in the
	// console, approving or declining it; "" when no one did there (the
	// caller's own client answered, or no one was asked).
	Approver      string        `json:"approver,omitempty"`
	Duration      time.Duration `json:"duration_ns"`
	RequestBytes  int           `json:"request_bytes"`
	ResponseBytes int           `json:"response_bytes"`
}

// Filter selects records; zero fields select everything.
type Filter struct {
	Since     time.Time // records at or after
	Tool      string
	Principal string
	// Limit is the most records returned, the newest; 0 is DefaultLimit.
	Limit int
}

// DefaultLimit is Filter.Limit's default.
const DefaultLimit = 100

// Store keeps records, the newest MaxRows of them.
type Store interface {
	// Append adds records and drops the oldest past the store's bound.
	Append(ctx context.Context, recs []Record) error
	// Query returns the newest records f selects, oldest first.
	Query(ctx context.Context, f Filter) ([]Record, error)
}

// MaxRows is how many records a Store keeps.
const MaxRows = 100_000
