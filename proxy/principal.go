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

// owners maps session ids to the principal that opened them. Every id
// the MCP server issues is bound as it is issued, so an id not bound here
// is refused whatever the MCP server would say. Entries go on DELETE, and
// when unused for longer than sessions live idle (with no request in
// flight, such as a GET stream), so the map is bounded by the sessions in
// use; the MCP server forgets such sessions too.
type owners struct {
	mu  sync.Mutex
	ttl time.Duration
	by  map[string]*ownerEntry
}

type ownerEntry struct {
	p        principal
	lastSeen time.Time
	active   int // requests in flight
}

func newOwners(ttl time.Duration) *owners {
	return &owners{ttl: ttl, by: make(map[string]*ownerEntry)}
}

// enter admits a request of p for session sid, and reports whether it
// may go on; a true answer must be followed by leave.
func (o *owners) enter(sid string, p principal, now time.Time) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	e, ok := o.by[sid]
	if !ok || e.p != p {
		return false
	}
	e.lastSeen = now
	e.active++
	return true
}

func (o *owners) leave(sid string, now time.Time) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if e, ok := o.by[sid]; ok {
		e.lastSeen = now
		e.active--
	}
}

func (o *owners) bind(sid string, p principal, now time.Time) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for id, e := range o.by {
		if e.active == 0 && now.Sub(e.lastSeen) > o.ttl {
			delete(o.by, id)
		}
	}
	o.by[sid] = &ownerEntry{p: p, lastSeen: now}
}

func (o *owners) forget(sid string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	delete(o.by, sid)
}

// serveOwned passes r to next and keeps the session's ownership: a session
// opened by this request (its response names a new session id) is bound
// to p; a request for a session not bound to p is refused; a session
// ended by DELETE is forgotten.
func (g *guard) serveOwned(w http.ResponseWriter, r *http.Request, p principal) {
	sid := r.Header.Get(server.HeaderKeySessionID)
	if sid == "" {
		g.next.ServeHTTP(&sessionWatcher{ResponseWriter: w, bind: func(id string) { g.owners.bind(id, p, time.Now()) }}, r)
		return
	}
	if !g.owners.enter(sid, p, time.Now()) {
		g.refuse(w, r, http.StatusNotFound, "session not found", "cause", "not a session of this token")
		return
	}
	g.next.ServeHTTP(w, r)
	g.owners.leave(sid, time.Now())
	if r.Method == http.MethodDelete {
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
