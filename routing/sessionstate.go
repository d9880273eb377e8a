package routing

import (
	"slices"

	"github.com/mcp-router/mcp-router/routing/fuse"
)

// SessionState is a Session but its belt, for a stateless client's handle.
type SessionState struct {
	Domains []string             // most recent first
	Breaker fuse.BreakerSnapshot // the discovery breaker
	// The detour since the last successful call.
	Queries   []string
	Given     []string
	Collision bool
}

// State returns the session's state for RestoreSession.
func (s *Session) State() SessionState {
	s.mu.Lock()
	defer s.mu.Unlock()
	return SessionState{
		Domains: slices.Clone(s.domains), Breaker: s.breaker.Snapshot(),
		Queries: slices.Clone(s.detour.queries), Given: slices.Sorted(slices.Values(s.detour.given)),
		Collision: s.detour.collision,
	}
}

// RestoreSession starts a session with an empty belt and st's state.
func (r *Router) RestoreSession(opts SessionOptions, st SessionState) *Session {
	s := r.NewSession(opts)
	s.breaker.Restore(st.Breaker)
	s.domains = slices.Clone(st.Domains[:min(len(st.Domains), s.opts.ContextSize)])
	s.detour = detour{queries: slices.Clone(st.Queries), given: slices.Clone(st.Given), collision: st.Collision}
	return s
}
