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

// TokenValid reports, in constant time, whether token is one of the
// configured bearer tokens.
func (f *Checks) TokenValid(token string) bool {
	return f.g.tokenIndex(strings.TrimSpace(token)) >= 0
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

// Authenticated reports whether r carries a valid bearer token: a
// configured one, or a JWT from the issuer.
func (f *Checks) Authenticated(r *http.Request) bool {
	p, err := f.g.authenticate(r)
	return err == nil && p != noPrincipal
}
