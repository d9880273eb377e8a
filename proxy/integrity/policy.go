package integrity

import "fmt"

// Policy says what the hub does with a tool that [Scan] flags.
type Policy string

const (
	// Warn, the default, logs the findings and exposes the tool.
	Warn Policy = "warn"
	// Quarantine hides the tool and rejects calls to it until its pin is
	// approved ([Pin.Approved]).
	Quarantine Policy = "quarantine"
)

// ParsePolicy reads a policy from configuration.
func ParsePolicy(s string) (Policy, error) {
	switch Policy(s) {
	case "", Warn:
		return Warn, nil
	case Quarantine:
		return Quarantine, nil
	}
	return "", fmt.Errorf("unknown poisoning policy %q (want %q or %q)", s, Warn, Quarantine)
}

// Blocks reports whether p hides a tool with these findings whose pin is
// not approved (see [Pin.Approved]).
func (p Policy) Blocks(findings []Finding, approved bool) bool {
	return p == Quarantine && len(findings) > 0 && !approved
}
