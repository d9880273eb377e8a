package frontdoor

import (
	"cmp"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"
)

// Token is a static bearer token and the profile its callers are served
// ("" for the gateway's own). Only an Admin token's principal may act on
// the gateway (restarts, pin approvals, lesson edits).
type Token struct {
	Token, Profile string
	Admin          bool
}

// principal is who a request is: its name (a token's fingerprint, or
// "oidc:" and the token's subject), profile and role. noPrincipal is a
// request without a token, or with none configured.
type principal struct {
	name, profile string
	role          role
}

// role is what a principal may do besides calling its profile's tools.
type role uint8

const (
	// roleWide sees the whole gateway (metrics, the upstreams' states): a
	// token of http.bearer_tokens, which names no profile.
	roleWide role = 1
	// roleAdmin also acts on it (restarts, pin approvals, lesson edits):
	// a Token with Admin set, or anyone when no tokens are configured.
	roleAdmin role = 3
)

var noPrincipal principal

// authRequired reports whether requests need a token.
func (g *guard) authRequired() bool { return len(g.tokens) > 0 || g.oidc != nil }

// authenticate returns who r is: noPrincipal when no token is required,
// else a *tokenError for a request without a valid token.
func (g *guard) authenticate(r *http.Request) (principal, *tokenError) {
	if !g.authRequired() {
		return noPrincipal, nil
	}
	token, sent := bearerToken(r.Header.Get("Authorization"))
	if p, ok := g.tokenPrincipal(token); sent && ok {
		return p, nil
	}
	if !sent || g.oidc == nil {
		return noPrincipal, &tokenError{Status: http.StatusUnauthorized, Reason: "missing or invalid bearer token"}
	}
	if strings.Count(token, ".") != 2 { // not a JWS in compact form
		return noPrincipal, invalidToken("the token is not a JWT", "missing or invalid bearer token")
	}
	p, err := g.oidc.verify(r.Context(), token)
	p.profile = g.own(p.profile)
	return p, err
}

// own is profile, or "" when it names the gateway's own (Options.Profile).
func (g *guard) own(profile string) string {
	if profile == g.ownProfile {
		return ""
	}
	return profile
}

// checkToken authenticates r, refusing it (and reporting false) when its
// client's address sent too many refused tokens lately, or its token is
// refused. A token refused with 401 counts against the address; no token,
// or one the issuer could not be asked about, does not.
func (g *guard) checkToken(w http.ResponseWriter, r *http.Request) (principal, bool) {
	if !g.authRequired() {
		return noPrincipal, true
	}
	client, _ := g.clientAddr(r)
	if wait := g.failures.wait(client); wait > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(retryAfter(wait)))
		g.refuse(w, r, http.StatusTooManyRequests, "too many refused bearer tokens from this address: retry later")
		return noPrincipal, false
	}
	p, terr := g.authenticate(r)
	if terr == nil {
		return p, true
	}
	if _, sent := bearerToken(r.Header.Get("Authorization")); sent && terr.Status == http.StatusUnauthorized && !terr.Unchecked {
		g.failures.failed(client)
	}
	g.refuseToken(w, r, terr)
	return noPrincipal, false
}

// tokenPrincipal is the principal of token, compared in constant time with each.
func (g *guard) tokenPrincipal(token string) (principal, bool) {
	sum := sha256.Sum256([]byte(token))
	found := -1
	for i := range g.tokens {
		found = subtle.ConstantTimeSelect(subtle.ConstantTimeCompare(sum[:], g.tokens[i].sum[:]), i, found)
	}
	if found < 0 {
		return noPrincipal, false
	}
	t := g.tokens[found]
	return principal{name: fingerprintOf(t.sum), profile: g.own(t.profile), role: t.role}, true
}

// refuseToken refuses a token with a WWW-Authenticate challenge (RFC 6750).
func (g *guard) refuseToken(w http.ResponseWriter, r *http.Request, e *tokenError) {
	w.Header().Set("WWW-Authenticate", g.challenge(e))
	g.refuse(w, r, e.Status, cmp.Or(e.Description, e.Reason), "cause", e.Reason)
}

// challenge is the WWW-Authenticate value for e.
func (g *guard) challenge(e *tokenError) string {
	var b strings.Builder
	b.WriteString(`Bearer realm="mcp-router"`)
	if g.oidc != nil {
		b.WriteString(`, resource_metadata="` + g.metadataURL + `"`)
	}
	if e.Code != "" {
		b.WriteString(`, error="` + e.Code + `"`)
		if e.Description != "" {
			b.WriteString(`, error_description="` + e.Description + `"`)
		}
	}
	if e.Code == "insufficient_scope" && g.oidc != nil && len(g.oidc.opts.RequiredScopes) > 0 {
		b.WriteString(`, scope="` + strings.Join(g.oidc.opts.RequiredScopes, " ") + `"`)
	}
	return b.String()
}

type profileKey struct{}

// ProfileOf is the profile Guard found for ctx's request: the profile of
// its token, or "" for the gateway's own profile.
func ProfileOf(ctx context.Context) string {
	p, _ := ctx.Value(profileKey{}).(string)
	return p
}

// withCaller marks ctx with p's name, profile and role.
func withCaller(ctx context.Context, p principal) context.Context {
	ctx = WithPrincipal(ctx, p.name)
	if p.profile != "" {
		ctx = context.WithValue(ctx, profileKey{}, p.profile)
	}
	if p.role != 0 {
		ctx = context.WithValue(ctx, roleKey{}, p.role)
	}
	return ctx
}

type roleKey struct{}

func roleOf(ctx context.Context) role {
	r, _ := ctx.Value(roleKey{}).(role)
	return r
}

// WholeGatewayOnly serves next, a view of the whole gateway, to the
// callers that may see it (Caller.Wide) and refuses others (403).
func WholeGatewayOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if roleOf(r.Context())&roleWide == 0 {
			WriteRefusal(w, http.StatusForbidden, "this token is served one profile; this path shows the whole gateway "+
				"(it takes a token of http.bearer_tokens or an administrative one)")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// ByProfile serves each request with the handler of its caller's profile
// (ProfileOf), the gateway's own ("") with own; another profile gets 404.
func ByProfile(own http.Handler, profiles map[string]http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := ProfileOf(r.Context())
		h, ok := profiles[p]
		if p == "" {
			h, ok = own, true
		}
		if !ok {
			WriteRefusal(w, http.StatusNotFound, "no such profile is served here")
			return
		}
		h.ServeHTTP(w, r)
	})
}

// metadataPath is the well-known path of protected-resource metadata.
const metadataPath = "/.well-known/oauth-protected-resource"

// MetadataPaths are the paths ResourceMetadata serves: the well-known
// path followed by the resource's path (RFC 9728), and alone but for a
// subresource; none without an issuer.
func MetadataPaths(opts Options) []string {
	if opts.OIDC == nil {
		return nil
	}
	var paths []string
	if opts.Subresource == "" {
		paths = append(paths, metadataPath)
	}
	if u := MetadataURL(resourceAt(opts.OIDC.opts.Resource, opts.Subresource)); strings.Contains(u, metadataPath+"/") {
		paths = append(paths, u[strings.Index(u, metadataPath):])
	}
	return paths
}

// ResourceMetadata serves the protected-resource metadata (RFC 9728) of
// the gateway (or opts.Subresource) behind Guard's Host and Origin
// checks, to GET and HEAD; without an issuer it is 404.
func ResourceMetadata(opts Options) http.Handler {
	c := NewChecks(opts)
	var doc []byte
	if c.g.oidc != nil {
		doc = c.g.oidc.metadata(opts.Subresource)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !c.CheckSite(w, r) {
			return
		}
		if doc == nil {
			http.NotFound(w, r)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "max-age=300")
		if r.Method == http.MethodGet {
			_, _ = w.Write(doc)
		}
	})
}

type principalKey struct{}

// LocalPrincipal is the principal of calls that carry no bearer token:
// over stdio, and over HTTP when no tokens are configured.
const LocalPrincipal = "local"

// WithPrincipal marks ctx as a request of the named principal. Guard
// marks each request it lets through with a bearer token.
func WithPrincipal(ctx context.Context, name string) context.Context {
	return context.WithValue(ctx, principalKey{}, name)
}

// PrincipalOf is the principal Guard found for ctx's request: the
// fingerprint of its bearer token, or "" when it carried none.
func PrincipalOf(ctx context.Context) string {
	p, _ := ctx.Value(principalKey{}).(string)
	return p
}

type callerTokenKey struct{}

// withCallerToken keeps the request's bearer token, for a token exchange.
func withCallerToken(ctx context.Context, token string) context.Context {
	return context.WithValue(ctx, callerTokenKey{}, token)
}

// CallerTokenOf is the bearer token Guard let ctx's request in with, or
// "": for a token exchange only.
func CallerTokenOf(ctx context.Context) string {
	t, _ := ctx.Value(callerTokenKey{}).(string)
	return t
}

// TokenFingerprint is the name a bearer token's caller goes by: "token-"
// and the first 12 hex digits of its SHA-256.
func TokenFingerprint(token string) string {
	return fingerprintOf(sha256.Sum256([]byte(strings.TrimSpace(token))))
}

func fingerprintOf(sum [sha256.Size]byte) string {
	return "token-" + hex.EncodeToString(sum[:6])
}

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
