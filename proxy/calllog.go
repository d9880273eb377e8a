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
