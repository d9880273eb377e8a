package proxy

import (
	"sync"
	"sync/atomic"
	"time"
)

// CallFailure is one call that failed, as [Metrics.Calls] reports it.
type CallFailure struct {
	At       time.Time `json:"at"`
	Upstream string    `json:"upstream"`
	Tool     string    `json:"tool"`
	Kind     string    `json:"kind"` // an UpstreamError kind, or "tool_error" for an isError result
}

// recentFailures is how many failures Calls keeps.
const recentFailures = 10

// callCounts counts calls and keeps the latest failures, for a gateway's
// status. Safe for concurrent use.
type callCounts struct {
	served, failed atomic.Uint64

	mu     sync.Mutex
	recent []CallFailure // oldest first, at most recentFailures

	ring callRing // the latest calls, failed or not
}

func (c *callCounts) done(upstream, tool, kind string) {
	c.served.Add(1)
	if kind != "" {
		c.fail(upstream, tool, kind)
	}
}

func (c *callCounts) fail(upstream, tool, kind string) {
	c.failed.Add(1)
	f := CallFailure{At: time.Now().UTC(), Upstream: upstream, Tool: tool, Kind: kind}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.recent) == recentFailures {
		c.recent = append(c.recent[:0], c.recent[1:]...)
	}
	c.recent = append(c.recent, f)
}

// Calls returns the number of tool calls through the hub, how many failed
// (a router error or an isError result), and the latest failures, oldest
// first. A nil *Metrics reports nothing.
func (m *Metrics) Calls() (served, failed uint64, recent []CallFailure) {
	if m == nil {
		return 0, 0, nil
	}
	m.log.mu.Lock()
	recent = append([]CallFailure(nil), m.log.recent...)
	m.log.mu.Unlock()
	return m.log.served.Load(), m.log.failed.Load(), recent
}

// Call is one tool call through the hub, as [Metrics.RecentCalls] reports
// it.
type Call struct {
	At       time.Time     `json:"at"`
	Upstream string        `json:"upstream"`
	Tool     string        `json:"tool"`
	Dur      time.Duration `json:"dur"`
	Kind     string        `json:"kind,omitempty"` // "" when the tool ran, "tool_error" for an isError result, else an UpstreamError kind
}

// recentCallsKept is how many calls RecentCalls keeps.
const recentCallsKept = 50

// callRing keeps the latest calls. Safe for concurrent use.
type callRing struct {
	mu    sync.Mutex
	calls []Call // a ring of at most recentCallsKept
	next  int
}

func (c *callCounts) call(upstream, tool string, dur time.Duration, kind string) {
	r := &c.ring
	r.mu.Lock()
	defer r.mu.Unlock()
	call := Call{At: time.Now().UTC(), Upstream: upstream, Tool: tool, Dur: dur, Kind: kind}
	if len(r.calls) < recentCallsKept {
		r.calls = append(r.calls, call)
		return
	}
	r.calls[r.next] = call
	r.next = (r.next + 1) % recentCallsKept
}

// RecentCalls returns the latest tool calls through the hub, newest first
// (at most 50). A nil *Metrics reports none.
func (m *Metrics) RecentCalls() []Call {
	if m == nil {
		return nil
	}
	r := &m.log.ring
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]Call, 0, len(r.calls))
	for i := range r.calls {
		out = append(out, r.calls[(r.next+len(r.calls)-1-i)%len(r.calls)])
	}
	return out
}

// toolError marks the latest call of tool that ran as one that returned
// an isError result.
func (r *callRing) toolError(upstream, tool string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := range r.calls {
		c := &r.calls[(r.next+len(r.calls)-1-i)%len(r.calls)]
		if c.Upstream == upstream && c.Tool == tool && c.Kind == "" {
			c.Kind = "tool_error"
			return
		}
	}
}
