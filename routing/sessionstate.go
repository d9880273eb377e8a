package routing

import (
	"maps"
	"slices"

	"github.com/mcp-router/mcp-router/routing/fuse"
)

// SessionState is what a Session carries from call to call besides its
// belt: its domain context, its breaker and its current detour. A client
// that keeps no session on the server (the stateless protocol) carries it
// in a handle and hands it back.
type SessionState struct {
	Domains []string             // most recent first
	Breaker fuse.BreakerSnapshot // the discovery breaker
	// Queries, Given and Collision are the detour since the last
	// successful call: its queries, the tools it was given, and whether it
	// met a collision alert.
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
		Queries: slices.Clone(s.detour.queries), Given: slices.Sorted(maps.Keys(s.detour.given)),
		Collision: s.detour.collision,
	}
}

// RestoreSession starts a session with an empty belt and st's state (at
// most ContextSize domains are kept).
func (r *Router) RestoreSession(opts SessionOptions, st SessionState) *Session {
	s := r.NewSession(opts)
	s.breaker.Restore(st.Breaker)
	s.domains = slices.Clone(st.Domains[:min(len(st.Domains), s.opts.ContextSize)])
	s.detour = detour{queries: slices.Clone(st.Queries), collision: st.Collision}
	if len(st.Given) > 0 {
		s.detour.given = map[string]bool{}
		for _, name := range st.Given {
			s.detour.given[name] = true
		}
	}
	return s
}
