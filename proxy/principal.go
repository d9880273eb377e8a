package proxy

// Session ownership over HTTP (RELIABILITY SEC-06): with several bearer
// tokens, each token is a principal, and a session belongs to the one
// that opened it. A request for that session with another principal's
// token is answered as for an unknown session (404), so a leaked session
// id is no use without its own token, and no id's existence is revealed.

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/server"
)

// principal is the index of the bearer token a request carried; noPrincipal
// means none matched (or none are configured).
type principal int

const noPrincipal principal = -1

// principalOf returns which configured token h carries, comparing against
// every token in constant time.
func (g *guard) principalOf(h http.Header) principal {
	token, ok := bearerToken(h.Get("Authorization"))
	if !ok {
		return noPrincipal
	}
	sum := sha256.Sum256([]byte(token))
	found := int(noPrincipal)
	for i := range g.tokens {
		eq := subtle.ConstantTimeCompare(sum[:], g.tokens[i][:])
		found = subtle.ConstantTimeSelect(eq, i, found)
	}
	return principal(found)
}

// owners maps live session ids to the principal that opened them. Entries
// go on DELETE, and on insert when unused for longer than sessions live
// idle, so the map is bounded by the sessions in use.
type owners struct {
	mu  sync.Mutex
	ttl time.Duration
	by  map[string]ownerEntry
}

type ownerEntry struct {
	p        principal
	lastSeen time.Time
}

func newOwners(ttl time.Duration) *owners {
	return &owners{ttl: ttl, by: make(map[string]ownerEntry)}
}

// allowed reports whether p may use session sid: an id not bound here is
// left to the MCP server, which knows whether it exists.
func (o *owners) allowed(sid string, p principal, now time.Time) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	e, ok := o.by[sid]
	if !ok {
		return true
	}
	if e.p != p {
		return false
	}
	e.lastSeen = now
	o.by[sid] = e
	return true
}

func (o *owners) bind(sid string, p principal, now time.Time) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for id, e := range o.by {
		if now.Sub(e.lastSeen) > o.ttl {
			delete(o.by, id)
		}
	}
	o.by[sid] = ownerEntry{p: p, lastSeen: now}
}

func (o *owners) forget(sid string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	delete(o.by, sid)
}

// serveOwned passes r to next and keeps the session's ownership: a session
// opened by this request (its response names a new session id) is bound
// to p; a session ended by DELETE is forgotten.
func (g *guard) serveOwned(w http.ResponseWriter, r *http.Request, p principal) {
	sid := r.Header.Get(server.HeaderKeySessionID)
	if sid != "" && !g.owners.allowed(sid, p, time.Now()) {
		g.refuse(w, r, http.StatusNotFound, "session not found", "cause", "session opened with another token")
		return
	}
	if sid == "" {
		w = &sessionWatcher{ResponseWriter: w, bind: func(id string) { g.owners.bind(id, p, time.Now()) }}
	}
	g.next.ServeHTTP(w, r)
	if sid != "" && r.Method == http.MethodDelete {
		g.owners.forget(sid)
	}
}

// sessionWatcher sees the response headers of a request without a session
// and reports the session id the MCP server gave it, if any.
type sessionWatcher struct {
	http.ResponseWriter
	bind func(string)
	seen bool
}

func (s *sessionWatcher) WriteHeader(status int) {
	s.see()
	s.ResponseWriter.WriteHeader(status)
}

func (s *sessionWatcher) Write(b []byte) (int, error) {
	s.see()
	return s.ResponseWriter.Write(b)
}

func (s *sessionWatcher) see() {
	if s.seen {
		return
	}
	s.seen = true
	if id := s.Header().Get(server.HeaderKeySessionID); id != "" {
		s.bind(id)
	}
}

// Flush keeps server-sent events streaming through the watcher.
func (s *sessionWatcher) Flush() {
	s.see()
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection.
func (s *sessionWatcher) Unwrap() http.ResponseWriter { return s.ResponseWriter }
