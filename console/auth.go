package console

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"net/http"
	"net/netip"
	"sync"
	"time"

	"github.com/mcp-router/mcp-router/proxy/frontdoor"
)

// Door is the front door's checks the console applies to every request (frontdoor.Checks).
type Door interface {
	HostAllowed(host string) bool
	OriginAllowed(origin string) bool
	// TokensRequired reports whether a login is needed at all.
	TokensRequired() bool
	// TokenCaller is what a configured bearer token lets its bearer see and do; false for any other
	// token.
	TokenCaller(token string) (frontdoor.Caller, bool)
	// ClientAddr is the address a request is logged under (the client's behind a trusted proxy).
	ClientAddr(r *http.Request) string
}

const (
	cookieName = "mcp_router_console"
	// maxSessions bounds the logins remembered; the oldest goes first.
	maxSessions = 64
	// maxFormBytes bounds a form's body.
	maxFormBytes = 8 << 10
)

// session is one browser's login, and who logged in.
type session struct {
	csrf    string
	expires time.Time
	caller  frontdoor.Caller
}

// sessions are the logins, by the cookie's value.
type sessions struct {
	mu   sync.Mutex
	byID map[string]session
}

// open starts a session of caller and returns its id.
func (s *sessions) open(caller frontdoor.Caller) (id string, _ session) {
	id = randomHex(32)
	sess := session{csrf: randomHex(32), expires: time.Now().Add(sessionTTL), caller: caller}
	s.mu.Lock()
	defer s.mu.Unlock()
	// The expired sessions go; when that frees no room, the oldest.
	oldest := ""
	for id, old := range s.byID {
		if time.Now().After(old.expires) {
			delete(s.byID, id)
		} else if oldest == "" || old.expires.Before(s.byID[oldest].expires) {
			oldest = id
		}
	}
	if len(s.byID) >= maxSessions {
		delete(s.byID, oldest)
	}
	s.byID[id] = sess
	return id, sess
}

// get returns the live session of id.
func (s *sessions) get(id string) (session, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sess, ok := s.byID[id]
	if !ok || time.Now().After(sess.expires) {
		delete(s.byID, id)
		return session{}, false
	}
	return sess, true
}

func (s *sessions) close(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.byID, id)
}

func randomHex(n int) string {
	b := make([]byte, n/2)
	rand.Read(b) // never fails (crypto/rand)
	return hex.EncodeToString(b)
}

// sessionOf returns the request's session.
func (c *Console) sessionOf(r *http.Request) (string, session, bool) {
	ck, err := r.Cookie(cookieName)
	if err != nil {
		return "", session{}, false
	}
	sess, ok := c.sessions.get(ck.Value)
	return ck.Value, sess, ok
}

// setCookie hands the browser its session.
func (c *Console) setCookie(w http.ResponseWriter, r *http.Request, id string) {
	http.SetCookie(w, &http.Cookie{
		Name: cookieName, Value: id, Path: prefix + "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil, MaxAge: int(sessionTTL.Seconds()),
	})
}

// csrfValid reports whether the request carries the session's CSRF token, in the X-CSRF-Token
// header (htmx) or the csrf form field.
func csrfValid(r *http.Request, sess session) bool {
	got := r.Header.Get("X-CSRF-Token")
	if got == "" {
		got = r.PostFormValue("csrf")
	}
	return got != "" && subtle.ConstantTimeCompare([]byte(got), []byte(sess.csrf)) == 1
}

// originAllowed checks the Origin of a request: one that changes state must carry an allowed Origin
// (browsers send it with every POST); any other may omit it, but not send a foreign one.
// Sec-Fetch-Site, when sent, must not be cross-site.
func (c *Console) originAllowed(r *http.Request, changes bool) bool {
	if r.Header.Get("Sec-Fetch-Site") == "cross-site" {
		return false
	}
	origin, sent := r.Header["Origin"]
	if !sent {
		return !changes
	}
	if len(origin) != 1 {
		return false
	}
	// The console's own origin: the Host it was reached at, once allowed.
	if origin[0] == "http://"+r.Host || origin[0] == "https://"+r.Host {
		return true
	}
	return c.opts.Door.OriginAllowed(origin[0])
}

// maxFailedLogins bounds the failed console logins of one client address a minute: past it, that
// address's logins are refused (429) until the minute is over, so a token cannot be guessed at
// speed, and a flood from one address never locks out the right token sent from another.
const maxFailedLogins = 10

// maxLoginSources bounds the sources counted at once; past it, new ones share one count until the
// minute is over.
const maxLoginSources = 4096

// loginLimit counts failed logins in the current minute, per client address.
type loginLimit struct {
	now func() time.Time

	mu     sync.Mutex
	start  time.Time
	failed map[string]int
}

// allow reports whether a login may be tried now from addr.
func (l *loginLimit) allow(addr string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if now := l.now(); now.Sub(l.start) >= time.Minute || l.failed == nil {
		l.start, l.failed = now, map[string]int{}
	}
	return l.failed[l.sourceLocked(addr)] < maxFailedLogins
}

func (l *loginLimit) fail(addr string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.failed == nil {
		l.failed = map[string]int{}
	}
	l.failed[l.sourceLocked(addr)]++
}

// sourceLocked is what addr's failures are counted under: the address, its /64 for IPv6 (one host's
// share), or, with maxLoginSources counted already, the one count that new sources share.
func (l *loginLimit) sourceLocked(addr string) string {
	if ip, err := netip.ParseAddr(addr); err == nil && ip.Unmap().Is6() {
		p, _ := ip.WithZone("").Prefix(64)
		addr = p.String()
	}
	if _, known := l.failed[addr]; !known && len(l.failed) >= maxLoginSources {
		return "overflow"
	}
	return addr
}
