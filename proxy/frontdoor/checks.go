package frontdoor

import (
	"net/http"
	"strings"
)

// Checks are Guard's Host, Origin and token checks, for a handler that
// authenticates its requests itself (a browser interface, whose login
// checks the token once).
type Checks struct{ g *guard }

// NewChecks returns the checks of a Guard with opts.
func NewChecks(opts Options) *Checks {
	return &Checks{Guard(nil, opts).(*guard)}
}

// HostAllowed reports whether the Host header value (with or without a
// port) is a loopback name or IP, or one of the allowed hosts.
func (f *Checks) HostAllowed(host string) bool { return f.g.hostAllowed(host) }

// OriginAllowed reports whether origin is an http(s) loopback origin or
// one of the allowed origins.
func (f *Checks) OriginAllowed(origin string) bool { return f.g.originAllowed(origin) }

// TokensRequired reports whether bearer tokens are configured.
func (f *Checks) TokensRequired() bool { return f.g.authRequired() }

// Caller is what a request's token lets its bearer see and do.
type Caller struct {
	// Principal is the name audit records and lessons know it by.
	Principal string
	// Profile is the profile it is served, "" for the gateway's own.
	Profile string
	// Wide: it may see the whole gateway, not only its profile.
	Wide bool
	// Admin: it may act on the gateway (restarts, pins, lessons).
	Admin bool
}

func callerOf(p principal) Caller {
	return Caller{Principal: p.name, Profile: p.profile, Wide: p.role&roleWide != 0, Admin: p.role == roleAdmin}
}

// TokenCaller is the caller of one of the configured static bearer
// tokens (compared in constant time); false for any other token.
func (f *Checks) TokenCaller(token string) (Caller, bool) {
	p, ok := f.g.tokenPrincipal(strings.TrimSpace(token))
	return callerOf(p), ok
}

// RequestCaller is the caller of r's bearer token (a configured one or a
// JWT from the issuer); false when it carries no valid one. With no tokens
// configured, every request is the local, administrative caller.
func (f *Checks) RequestCaller(r *http.Request) (Caller, bool) {
	if !f.TokensRequired() {
		return callerOf(principal{name: LocalPrincipal, role: roleAdmin}), true
	}
	p, err := f.g.authenticate(r)
	if err != nil || p == noPrincipal {
		return Caller{}, false
	}
	return callerOf(p), true
}

// CheckSite refuses a request whose Host or Origin is not allowed and
// answers a CORS preflight, as Guard does; it reports whether r goes on.
func (f *Checks) CheckSite(w http.ResponseWriter, r *http.Request) bool { return f.g.checkSite(w, r) }

// ClientAddr is the address r is logged under: its peer's, or, from a
// trusted proxy (Options.TrustedProxies), the client's it forwarded.
func (f *Checks) ClientAddr(r *http.Request) string {
	client, _ := f.g.clientAddr(r)
	return client
}
