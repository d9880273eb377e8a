package proxy

// Disabled upstreams: an upstream whose entry could not be used (a
// variable that is not set, a URL that does not parse once expanded) is
// left out of the hub, and only it: the others serve. The hub keeps what
// is known of it, so that status, doctor, the console and discovery all
// say, from one place, that it is off and why.

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// StateDisabled is the state of an upstream left out for its
// configuration (Options.Disabled); it never connects in this run.
const StateDisabled State = "disabled"

// DisabledUpstream is an upstream whose configuration entry could not be
// used.
type DisabledUpstream struct {
	Name        string
	Description string
	Domain      string
	// Prefix is what its tools' names would begin with; a call of such a
	// name says the upstream is disabled rather than that no tool has it.
	Prefix string
	// Err says what is wrong, for people: the file and line, the key, the
	// variable.
	Err error
	// Reason is what the model may read: no path, URL or value.
	Reason string
}

// disabledSet is the hub's disabled upstreams at one time, and since when
// they are left out.
type disabledSet struct {
	list  []DisabledUpstream
	since time.Time
}

func (h *Hub) disabledNow() *disabledSet { return h.disabled.Load() }

// SetDisabled replaces the disabled upstreams, for an edited configuration
// (see Apply); those already disabled keep their time.
func (h *Hub) SetDisabled(ds []DisabledUpstream) {
	old := h.disabledNow()
	since := time.Now()
	if len(old.list) > 0 {
		since = old.since
	}
	h.disabled.Store(&disabledSet{list: slices.Clone(ds), since: since})
}

// status is the disabled upstream's status, left out since the hub's
// creation.
func (d DisabledUpstream) status(since time.Time) Status {
	s := Status{Name: d.Name, State: StateDisabled, Cause: d.Err, Since: since, DownSince: since}
	if d.Err != nil {
		s.Err = d.Err.Error()
	}
	return s
}

// domain is the upstream's domain, as EffectiveDomain says it.
func (d DisabledUpstream) domain() string {
	if d.Domain != "" {
		return d.Domain
	}
	return d.Name
}

// ErrDisabled is the cause of a call of a tool of a disabled upstream.
var ErrDisabled = errors.New("disabled at start for its configuration")

// disabledOwner says, for a name no catalog tool has, that it would be a
// tool of a disabled upstream (the longest non-empty prefix that fits);
// nil when it is none's.
func (h *Hub) disabledOwner(name string) *UpstreamError {
	var best *DisabledUpstream
	dis := h.disabledNow().list
	for i, d := range dis {
		if d.Prefix != "" && strings.HasPrefix(name, d.Prefix) && (best == nil || len(d.Prefix) > len(best.Prefix)) {
			best = &dis[i]
		}
	}
	if best == nil {
		return nil
	}
	return &UpstreamError{Kind: KindUnavailable, Upstream: best.Name, Tool: name,
		Err: fmt.Errorf("%w: %w (%s)", ErrNotConnected, ErrDisabled, best.Reason)}
}
