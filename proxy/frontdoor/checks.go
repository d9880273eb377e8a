package frontdoor

// The front door's checks, for a browser interface served beside the MCP
// endpoint: a browser cannot send a bearer token when it navigates, so
// such an interface checks the token once (at its login) and the Host and
// Origin on every request.

import (
	"net/http"
	"strings"
)

// Checks are Guard's Host, Origin and token checks, for a handler that
// authenticates its requests itself.
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
func (f *Checks) TokensRequired() bool { return len(f.g.tokens) > 0 || f.g.oidc != nil }

// Caller is what a request's token lets its bearer see and do.
type Caller struct {
	// Principal is the name audit records and lessons know it by.
	Principal string
	// Profile is the profile it is served, "" for the gateway's own: a
	// token restricted to another profile sees nothing of this one.
	Profile string
	// Wide: it may see the whole gateway (metrics, every upstream's
	// state), not only its profile: a token of http.bearer_tokens or an
	// administrative one.
	Wide bool
	// Admin: it may act on the gateway (restart upstreams, approve pins,
	// edit lessons), not only see it.
	Admin bool
}

func callerOf(p principal) Caller {
	return Caller{Principal: p.name, Profile: p.profile, Wide: p.role&roleWide != 0, Admin: p.role == roleAdmin}
}

// TokenCaller is the caller of one of the configured static bearer
// tokens (compared in constant time); false for any other token.
func (f *Checks) TokenCaller(token string) (Caller, bool) {
	i := f.g.tokenIndex(strings.TrimSpace(token))
	if i < 0 {
		return Caller{}, false
	}
	return callerOf(principal{name: fingerprintOf(f.g.tokens[i]), profile: f.g.own(f.g.profiles[i]), role: f.g.roles[i]}), true
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

// CheckSite refuses a request whose Host or Origin is not allowed, as
// Guard does, and answers a browser's CORS preflight; it reports whether
// the request goes on.
func (f *Checks) CheckSite(w http.ResponseWriter, r *http.Request) bool { return f.g.checkSite(w, r) }

// ClientAddr is the address r is logged under: its peer's, or, from a
// trusted proxy (Options.TrustedProxies), the client's it forwarded.
func (f *Checks) ClientAddr(r *http.Request) string {
	client, _ := f.g.clientAddr(r)
	return client
}
