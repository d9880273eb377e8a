// Package approval is the gate of calls a person must approve: the policy
// of a profile's approvals section, the pipeline stage that asks through
// MCP elicitation (gate.go), the one question of a plan (plan.go), the
// summary the person reads (summary.go) and the console queue (queue.go).
// Nothing the model sends approves a call.
package approval

import (
	"cmp"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/mcp-router/mcp-router/internal/defaults"
)

// Mode is what the gate does when the client cannot be asked.
type Mode string

// The modes of approvals.without_elicitation.
const (
	// Refuse refuses the call with approval_unavailable (the default).
	Refuse Mode = "refuse"
	// Console waits, within the call's deadline, for an answer in the console.
	Console Mode = "console"
	// Allow lets the call go on unasked; its audit record says so.
	Allow Mode = "allow"
)

// Modes are the values approvals.without_elicitation takes.
var Modes = []Mode{Refuse, Console, Allow}

// DefaultTimeout is Policy.Timeout's default.
const DefaultTimeout = 2 * time.Minute

// Policy is a profile's approvals section.
type Policy struct {
	// Destructive gates every tool marked destructive [false].
	Destructive bool
	// Tools are globs (path.Match, any case) of tool names gated besides.
	Tools []string
	// WithoutElicitation is what to do when the client cannot be asked [Refuse].
	WithoutElicitation Mode
	// Timeout bounds the wait for an answer without an earlier deadline [DefaultTimeout].
	Timeout time.Duration
}

// ParseMode reads approvals.without_elicitation ("" is Refuse).
func ParseMode(s string) (Mode, error) {
	m := cmp.Or(Mode(s), Refuse)
	if !slices.Contains(Modes, m) {
		return "", fmt.Errorf("%q is not one of refuse, console, allow", s)
	}
	return m, nil
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

// Gated tells that a call of the tool exposed as name must be approved.
// Globs match whatever the case, so a server that renames a tool's case
// does not ungate it.
func (p Policy) Gated(name string, destructive bool) bool {
	if p.Destructive && destructive {
		return true
	}
	return slices.ContainsFunc(p.Tools, func(g string) bool {
		ok, _ := path.Match(strings.ToLower(g), strings.ToLower(name))
		return ok
	})
}

func (p Policy) mode() Mode { return cmp.Or(p.WithoutElicitation, Refuse) }

func (p Policy) timeout() time.Duration {
	defaults.Set(&p.Timeout, DefaultTimeout)
	return p.Timeout
}
