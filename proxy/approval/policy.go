// Package approval is the gate of calls a person must approve: the policy
// a profile's approvals section sets (which tools, and what to do when the
// calling client cannot be asked), the pipeline stage that asks the person
// through MCP elicitation on the calling client's own session (gate.go),
// the one question a plan with several gated steps asks (plan.go), the
// summary of a call's arguments the person reads (summary.go), and the
// bounded queue of calls waiting for an answer in the console (queue.go).
//
// Nothing the model sends approves a call: the answer comes from the
// client's elicitation response or the console, and a plan's approval
// rides on the plan value the gateway built, never on its JSON.
package approval

import (
	"fmt"
	"path"
	"slices"
	"time"
)

// Mode is what the gate does with a gated call whose client cannot be
// asked (it did not declare elicitation, or its protocol era has no way
// to ask).
type Mode string

// The modes of approvals.without_elicitation.
const (
	// Refuse refuses the call with approval_unavailable (the default).
	Refuse Mode = "refuse"
	// Console waits, within the call's deadline, for an administrative
	// principal to answer in the console's Approvals page.
	Console Mode = "console"
	// Allow lets the call go on unasked; its audit record says so.
	Allow Mode = "allow"
)

// Modes are the values approvals.without_elicitation takes.
var Modes = []Mode{Refuse, Console, Allow}

// DefaultTimeout is Policy.Timeout's default: how long a call with no
// deadline of its own waits for the person's answer.
const DefaultTimeout = 2 * time.Minute

// Policy is a profile's approvals section.
type Policy struct {
	// Destructive gates every tool whose server marked it destructive
	// (see routing.Destructive) [false].
	Destructive bool
	// Tools are globs (path.Match) over exposed tool names gated besides.
	Tools []string
	// WithoutElicitation is what to do when the client cannot be asked
	// [Refuse].
	WithoutElicitation Mode
	// Timeout bounds the wait for an answer of a call whose context has
	// no earlier deadline [DefaultTimeout].
	Timeout time.Duration
}

// ParseMode reads approvals.without_elicitation ("" is Refuse).
func ParseMode(s string) (Mode, error) {
	if s == "" {
		return Refuse, nil
	}
	if !slices.Contains(Modes, Mode(s)) {
		return "", fmt.Errorf("%q is not one of refuse, console, allow", s)
	}
	return Mode(s), nil
}

// CheckGlob reports a glob of approvals.tools that path.Match cannot use.
func CheckGlob(glob string) error {
	if _, err := path.Match(glob, ""); err != nil {
		return fmt.Errorf("%q is not a valid glob: %w", glob, err)
	}
	return nil
}

// On tells that the policy gates anything.
func (p Policy) On() bool { return p.Destructive || len(p.Tools) > 0 }

// Gated tells that a call of the tool exposed as name must be approved;
// destructive is whether its server marked it so.
func (p Policy) Gated(name string, destructive bool) bool {
	if p.Destructive && destructive {
		return true
	}
	return slices.ContainsFunc(p.Tools, func(g string) bool {
		ok, _ := path.Match(g, name)
		return ok
	})
}

func (p Policy) mode() Mode {
	if p.WithoutElicitation == "" {
		return Refuse
	}
	return p.WithoutElicitation
}

func (p Policy) timeout() time.Duration {
	if p.Timeout <= 0 {
		return DefaultTimeout
	}
	return p.Timeout
}
