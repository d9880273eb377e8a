package fuse

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
)

// Order is how [Fuse] merges the stated needs with the scored candidates.
type Order string

// The order policies.
const (
	// NeedsFirst puts the needs, in the order given, before the candidates
	// by descending score.
	NeedsFirst Order = "needs_first"
	// QRFirst puts the candidates by descending score before the needs.
	QRFirst Order = "qr_first"
	// MergeByScore sorts needs (as +Inf) and candidates together: it is
	// NeedsFirst with CollapseDuplicates, kept for profiles that name it.
	MergeByScore Order = "merge_by_score"
)

func (o Order) valid() bool {
	return o == NeedsFirst || o == QRFirst || o == MergeByScore
}

// Policy is the profile's routing.fuse section (YAML keys in parentheses
// below); [DefaultPolicy] gives the values of absent keys.
type Policy struct {
	MaxTools int // (max_tools) caps the belt; at least 1
	// RequireUserFacing (require_user_facing) keeps only tools that
	// Input.UserFacing accepts.
	RequireUserFacing bool
	MinQRScore        float64 // (min_qr_score) drops candidates scoring below it
	// AdoptQRWhenNeedsEmpty (adopt_qr_when_needs_empty) lets candidates
	// alone fill the belt when no stated need survives.
	AdoptQRWhenNeedsEmpty bool
	Order                 Order // (order_policy) how needs and candidates merge
	PreferExactNeeds      bool  // (prefer_exact_needs) moves the needs to the front
	CollapseDuplicates    bool  // (collapse_duplicates) keeps each tool's first entry
	SimpleMaxPrimary      int   // (simple_max_primary) caps SIMPLE_TOOL turns; >= 1
	// ComplexMinPrimary (complex_min_primary) is how many tools a
	// COMPLEX_TOOL turn tries to have, within MaxTools; >= 0.
	ComplexMinPrimary int
	// AllowedCapabilities (allowed_capabilities), when set, lists the only
	// tools (names as on the belt) that may be used.
	AllowedCapabilities []string
	// InternalTools (internal_tools) lists the tools that are not
	// user-facing: with RequireUserFacing they never go on the belt.
	InternalTools []string
}

// Admits reports whether tool passes the allowlist and, with
// RequireUserFacing, userFacing (nil: every tool is).
func (p Policy) Admits(tool string, userFacing func(string) bool) bool {
	if len(p.AllowedCapabilities) > 0 && !slices.ContainsFunc(p.AllowedCapabilities, func(a string) bool { return strings.TrimSpace(a) == tool }) {
		return false
	}
	return !p.RequireUserFacing || userFacing == nil || userFacing(tool)
}

// UserFacing returns the user-facing test of InternalTools; nil if none.
func (p Policy) UserFacing() func(string) bool {
	if len(p.InternalTools) == 0 {
		return nil
	}
	internal := make(map[string]bool, len(p.InternalTools))
	for _, name := range p.InternalTools {
		internal[strings.TrimSpace(name)] = true
	}
	return func(tool string) bool { return !internal[tool] }
}

// DefaultMaxTools is the belt size: routed tools on a session's belt.
const DefaultMaxTools = 12

// DefaultPolicy returns the default fuse policy.
func DefaultPolicy() Policy {
	return Policy{
		MaxTools:              DefaultMaxTools,
		RequireUserFacing:     true,
		MinQRScore:            0.35,
		AdoptQRWhenNeedsEmpty: true,
		Order:                 NeedsFirst,
		PreferExactNeeds:      true,
		CollapseDuplicates:    true,
		SimpleMaxPrimary:      1,
		ComplexMinPrimary:     2,
	}
}

// ErrUnknownKey is wrapped in a [FieldError] for a key Policy does not have.
var ErrUnknownKey = errors.New("unknown key")

// FieldError is a bad routing.fuse setting, named by its YAML key.
type FieldError struct {
	Key string // such as "max_tools" or "allowed_capabilities[2]"
	Err error
}

func (e *FieldError) Error() string { return e.Key + ": " + e.Err.Error() }

func (e *FieldError) Unwrap() error { return e.Err }

// Validate reports every invalid field, each as a [*FieldError], joined.
func (p Policy) Validate() error {
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, &FieldError{Key: key, Err: fmt.Errorf(format, args...)})
	}
	if p.MaxTools < 1 {
		bad("max_tools", "must be at least 1, got %d", p.MaxTools)
	}
	if math.IsNaN(p.MinQRScore) || math.IsInf(p.MinQRScore, 0) {
		bad("min_qr_score", "must be a finite number, got %v", p.MinQRScore)
	}
	if !p.Order.valid() {
		bad("order_policy", "must be needs_first, qr_first or merge_by_score, got %q", p.Order)
	}
	if p.SimpleMaxPrimary < 1 {
		bad("simple_max_primary", "must be at least 1, got %d", p.SimpleMaxPrimary)
	}
	if p.ComplexMinPrimary < 0 {
		bad("complex_min_primary", "must not be negative, got %d", p.ComplexMinPrimary)
	}
	for i, name := range p.AllowedCapabilities {
		if strings.TrimSpace(name) == "" {
			bad(fmt.Sprintf("allowed_capabilities[%d]", i), "must not be blank")
		}
	}
	for i, name := range p.InternalTools {
		if strings.TrimSpace(name) == "" {
			bad(fmt.Sprintf("internal_tools[%d]", i), "must not be blank")
		}
	}
	return errors.Join(errs...)
}

// Route is the main router's verdict on what kind of turn this is; it sets
// how many tools the belt may carry (see [Fuse]).
type Route string

// The routes. RouteUnspecified means the main router gave none.
const (
	RouteUnspecified Route = ""
	RouteSimple      Route = "SIMPLE_TOOL"
	RouteComplex     Route = "COMPLEX_TOOL"
	RouteGeneralChat Route = "GENERAL_CHAT"
	RouteExit        Route = "EXIT"
)

// ErrUnknownRoute is returned by [ParseRoute] for a name that is not a route.
var ErrUnknownRoute = errors.New("unknown route")

// ParseRoute parses a route name case-insensitively; "" is
// [RouteUnspecified].
func ParseRoute(s string) (Route, error) {
	r := Route(strings.ToUpper(strings.TrimSpace(s)))
	switch r {
	case RouteUnspecified, RouteSimple, RouteComplex, RouteGeneralChat, RouteExit:
		return r, nil
	}
	return "", fmt.Errorf("%w %q", ErrUnknownRoute, s)
}
