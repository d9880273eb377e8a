package frontdoor

// Session ownership (SEC-06): with several principals, a session belongs
// to the principal and profile that opened it; another's request for it
// is answered as for an unknown session (404), revealing nothing.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/server"

	"github.com/mcp-router/mcp-router/proxy/internal/wire"
)

// owners maps session ids to the principal and client that opened them,
// and counts each client's sessions and each session's requests in
// flight. Entries go on DELETE, or idle past ttl with none in flight.
type owners struct {
	mu      sync.Mutex
	ttl     time.Duration
	by      map[string]*ownerEntry
	clients map[string]*clientSessions
}

type ownerEntry struct {
	p        principal
	client   string // the key its client's sessions are counted under
	lastSeen time.Time
	active   int // requests in flight, calls and event streams
	streams  int // of which GET event streams
}

// clientSessions are one client's sessions, and its requests that may open one.
type clientSessions struct{ sessions, pending int }

func newOwners(ttl time.Duration) *owners {
	return &owners{ttl: ttl, by: make(map[string]*ownerEntry), clients: make(map[string]*clientSessions)}
}

// admission is what enter decided about a request in a session.
type admission int

const (
	admitted       admission = iota // counted: leave must follow
	untracked                       // a session not bound here; let the MCP server judge it
	notFound                        // not a session of this principal
	tooManyStreams                  // the session has its most requests in flight
)

// enter admits a request of p for session sid; stream says it is a GET
// event stream rather than a call, counted apart. With owned, a session
// not bound to p is notFound; without, an unknown one is untracked.
func (o *owners) enter(sid string, p principal, owned bool, maxStreams int, stream bool, now time.Time) admission {
	o.mu.Lock()
	defer o.mu.Unlock()
	e, ok := o.by[sid]
	switch {
	case owned && (!ok || e.p != p):
		return notFound
	case !ok:
		return untracked
	case maxStreams > 0 && e.held(stream) >= maxStreams:
		return tooManyStreams
	}
	e.lastSeen = now
	e.active++
	if stream {
		e.streams++
	}
	return admitted
}

// held is how many requests of a kind (streams, or calls) are in flight.
func (e *ownerEntry) held(stream bool) int {
	if stream {
		return e.streams
	}
	return e.active - e.streams
}

func (o *owners) leave(sid string, stream bool, now time.Time) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if e, ok := o.by[sid]; ok {
		e.lastSeen = now
		e.active--
		if stream {
			e.streams--
		}
	}
}

// reserve holds a place for a session client may open, unless it has max
// already; bindReserved or unreserve must follow a true answer.
func (o *owners) reserve(client string, max int, now time.Time) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.pruneLocked(now)
	c := o.client(client)
	if max > 0 && c.sessions+c.pending >= max {
		o.dropIdleClientLocked(client)
		return false
	}
	c.pending++
	return true
}

func (o *owners) unreserve(client string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if c := o.clients[client]; c != nil {
		c.pending--
		o.dropIdleClientLocked(client)
	}
}

// bindReserved binds sid in place of a place client reserved, in one
// step, so the session is never counted twice.
func (o *owners) bindReserved(sid string, p principal, client string, now time.Time) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if c := o.clients[client]; c != nil {
		c.pending--
	}
	o.pruneLocked(now)
	if _, ok := o.by[sid]; !ok {
		o.by[sid] = &ownerEntry{p: p, client: client, lastSeen: now}
		o.client(client).sessions++
	}
	o.dropIdleClientLocked(client)
}

// client is client's count, made on first use. The caller holds o.mu.
func (o *owners) client(client string) *clientSessions {
	c := o.clients[client]
	if c == nil {
		c = &clientSessions{}
		o.clients[client] = c
	}
	return c
}

func (o *owners) forget(sid string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.removeLocked(sid)
}

func (o *owners) pruneLocked(now time.Time) {
	for id, e := range o.by {
		if e.active == 0 && now.Sub(e.lastSeen) > o.ttl {
			o.removeLocked(id)
		}
	}
}

func (o *owners) removeLocked(sid string) {
	e, ok := o.by[sid]
	if !ok {
		return
	}
	delete(o.by, sid)
	if c := o.clients[e.client]; c != nil {
		c.sessions--
		o.dropIdleClientLocked(e.client)
	}
}

func (o *owners) dropIdleClientLocked(client string) {
	if c := o.clients[client]; c != nil && c.sessions <= 0 && c.pending <= 0 {
		delete(o.clients, client)
	}
}

// clientOf is the key a request's sessions are counted under.
func (g *guard) clientOf(r *http.Request, p principal) string {
	if p != noPrincipal {
		return "principal " + p.name
	}
	client, _ := g.clientAddr(r)
	return "address " + client
}

// serveSession passes r to next within its session's bounds: a POST
// without a session may open one (bound to p) unless its client has
// MaxSessionsPerClient; a session's calls and streams are bounded apart;
// with several principals (owned) another's session is 404.
func (g *guard) serveSession(w http.ResponseWriter, r *http.Request, p principal) {
	owned := len(g.tokens) > 1 || g.oidc != nil // several principals
	sid := r.Header.Get(server.HeaderKeySessionID)
	if sid == "" {
		if r.Method != http.MethodPost {
			g.next.ServeHTTP(w, r)
			return
		}
		client := g.clientOf(r, p)
		if !g.owners.reserve(client, g.maxSessions, time.Now()) {
			g.refuse(w, r, http.StatusTooManyRequests, fmt.Sprintf(
				"this client has %d sessions open (a 2026-07-28 request counts as one while it runs), the most allowed: end one (DELETE) before opening another", g.maxSessions))
			return
		}
		reserved := true
		defer func() {
			if reserved {
				g.owners.unreserve(client)
			}
		}()
		g.next.ServeHTTP(&sessionWatcher{ResponseWriter: w, bind: func(id string) {
			reserved = false
			g.owners.bindReserved(id, p, client, time.Now())
		}}, r)
		return
	}
	stream := r.Method == http.MethodGet
	adm := g.owners.enter(sid, p, owned, g.maxStreams, stream, time.Now())
	if adm == notFound || adm == untracked {
		adopted, full := g.adopt(r.Context(), sid, p, g.clientOf(r, p))
		if full {
			g.refuse(w, r, http.StatusTooManyRequests, fmt.Sprintf(
				"this client has %d sessions open, the most allowed: end one (DELETE) before resuming another", g.maxSessions))
			return
		}
		if adopted {
			adm = g.owners.enter(sid, p, owned, g.maxStreams, stream, time.Now())
		}
	}
	if adm == tooManyStreams && holdsNoStream(r) {
		adm = g.owners.enter(sid, p, owned, 0, stream, time.Now())
	}
	switch adm {
	case notFound:
		g.refuse(w, r, http.StatusNotFound, "session not found", "cause", "not a session of this token")
		return
	case tooManyStreams:
		what := "requests open"
		if stream {
			what = "event streams open"
		}
		g.refuse(w, r, http.StatusTooManyRequests, fmt.Sprintf(
			"this session has %d %s, the most allowed: wait for one to end", g.maxStreams, what))
		return
	}
	g.next.ServeHTTP(w, r)
	if adm == untracked {
		return
	}
	g.owners.leave(sid, stream, time.Now())
	if r.Method == http.MethodDelete {
		g.owners.forget(sid)
	}
}

// adopt binds to p a session not seen here that SessionOwner says was
// issued to p; full reports that the client has no room for it.
func (g *guard) adopt(ctx context.Context, sid string, p principal, client string) (adopted, full bool) {
	if g.ownerOf == nil {
		return false, false
	}
	want := LocalPrincipal
	if p != noPrincipal {
		want = p.name
	}
	if owner, ok := g.ownerOf(ctx, sid); !ok || owner != want {
		return false, false
	}
	if !g.owners.reserve(client, g.maxSessions, time.Now()) {
		return false, true
	}
	g.owners.bindReserved(sid, p, client, time.Now())
	return true, false
}

// sessionWatcher reports the session id a response names, if any.
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

// holdsNoStream reports whether r ends at once: a DELETE, or a POST of a
// notification or a response (such as notifications/cancelled, which a
// client at its limit needs to send).
func holdsNoStream(r *http.Request) bool {
	if r.Method == http.MethodDelete {
		return true
	}
	b, ok := wire.BodyBytes(r.Body) // as forward left it, not read yet
	if r.Method != http.MethodPost || !ok {
		return false
	}
	// Only the members' presence matters: an id of null is still an id.
	var env struct{ Method, ID json.RawMessage }
	return json.Unmarshal(b, &env) == nil && (env.Method == nil || env.ID == nil)
}
