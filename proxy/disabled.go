package proxy

// Disabled upstreams: an upstream whose entry could not be used (a
// variable that is not set, a URL that does not parse once expanded) is
// left out of the hub, and only it: the others serve. The hub keeps what
// is known of it, so that status, doctor, the console and discovery all
// say, from one place, that it is off and why.

import "time"

// StateDisabled is the state of an upstream left out for its
// configuration (Options.Disabled); it never connects in this run.
const StateDisabled State = "disabled"

// DisabledUpstream is an upstream whose configuration entry could not be
// used.
type DisabledUpstream struct {
	Name        string
	Description string
	Domain      string
	// Err says what is wrong, for people: the file and line, the key, the
	// variable.
	Err error
	// Reason is what the model may read: no path, URL or value.
	Reason string
}

// disabledStatus is the status of an upstream left out for its
// configuration.
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

// Disabled lists the upstreams left out for their configuration.
func (h *Hub) Disabled() []DisabledUpstream { return h.opts.Disabled }
