// Package frontdoor holds the checks every HTTP request passes before it
// reaches the MCP server: Guard checks its Host and Origin, bearer token,
// body and session bounds, marks its context with the caller's principal
// and profile, and hands it on (to ByProfile, say).
//
//   - guard.go: Guard and its Options, CheckListen, the HTTP server
//   - sessions.go: sessions per client, requests per session, owners
//   - auth.go: who a request is, its profile, the challenge, the
//     protected-resource metadata, and Checks for a handler that
//     authenticates itself
//   - oidc.go: JWTs from an OAuth/OIDC issuer
//   - clientaddr.go, failedtokens.go: client addresses, refused tokens
package frontdoor

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/mcp-router/mcp-router/internal/loopback"
	"github.com/mcp-router/mcp-router/proxy/internal/wire"
	"golang.org/x/sync/semaphore"
)

// DefaultMaxBodyBytes is Options.MaxBodyBytes's default.
const DefaultMaxBodyBytes = wire.MaxMessageBytes

// Defaults of Options' bounds on each client.
const (
	DefaultBodyTimeout          = 30 * time.Second
	DefaultMaxBodyMemory        = 64 << 20
	DefaultMaxSessionsPerClient = 64
	DefaultMaxStreamsPerSession = 32
)

// SessionIdleTTL is how long an HTTP session lives unused.
const SessionIdleTTL = 30 * time.Minute

// codeInvalidRequest is JSON-RPC's "Invalid Request", used for every refusal.
const codeInvalidRequest = -32600

// Options configures the HTTP front door. Zero values take the defaults in brackets.
type Options struct {
	// BearerTokens, when non-empty, makes every request need
	// "Authorization: Bearer <one of them>" or get 401. Empty strings are
	// ignored.
	BearerTokens []string
	// Tokens are more bearer tokens, each with the profile its callers
	// are served (see ProfileOf).
	Tokens []Token
	// Profile is the name of the gateway's own profile: a token or claim
	// rule naming it is served as one naming none.
	Profile string
	// OIDC, when set, also accepts JWTs from an OAuth/OIDC issuer.
	OIDC *Issuer
	// Subresource, with OIDC, is the path below OIDC's resource that the
	// Guard serves, such as "/all": its challenges name that resource's
	// own metadata. "" is the resource itself.
	Subresource string
	// AllowedOrigins are extra allowed browser origins, matched exactly
	// (scheme://host[:port]). Loopback origins are always allowed.
	AllowedOrigins []string
	// AllowedHosts are extra allowed Host header names (with or without a
	// port). Loopback hosts are always allowed.
	AllowedHosts []string
	// MaxBodyBytes limits a request body [4 MiB]; a larger one gets 413.
	MaxBodyBytes int64
	// BodyTimeout bounds the reading of one request body
	// [DefaultBodyTimeout]; a slower body gets 408.
	BodyTimeout time.Duration
	// MaxBodyMemory bounds the bytes of request bodies held in memory
	// until their requests are answered [DefaultMaxBodyMemory]; past it a
	// request gets 503 with Retry-After.
	MaxBodyMemory int64
	// MaxSessionsPerClient bounds the sessions one client (its bearer
	// token, else its address) may have open
	// [DefaultMaxSessionsPerClient]; past it, 429.
	MaxSessionsPerClient int
	// MaxStreamsPerSession bounds the calls in flight in one session, and
	// apart from them its open GET streams [DefaultMaxStreamsPerSession];
	// past it, 429. A DELETE, a notification and a response always pass.
	MaxStreamsPerSession int
	// TokenFailures bounds the refused bearer tokens each client address
	// may send; past it, 429 with Retry-After. Nil makes the Guard a limit
	// of its own; Guards of several paths share one.
	TokenFailures *TokenFailures
	// TrustedProxies are the reverse proxies (see ParseTrustedProxy) whose
	// X-Forwarded-For, or Forwarded, names the client, for TokenFailures,
	// MaxSessionsPerClient and the log. Empty trusts no peer.
	TrustedProxies []netip.Prefix
	// Logger gets one Warn line per refusal, never a token. Nil is silent.
	Logger *slog.Logger
	// SessionOwner, when set, names the principal a session id was issued
	// to (by another replica), so that a session not seen here is taken
	// on as that principal's.
	SessionOwner func(ctx context.Context, sessionID string) (principal string, ok bool)
}

// Guard wraps next, the MCP streamable HTTP handler, in the checks of
// SEC-01..SEC-06 and FI-12 of docs/reliability.md, in this order:
//
//  1. Host: a loopback name or IP or one of AllowedHosts, else 403 (DNS
//     rebinding).
//  2. Origin: absent, an http(s) loopback origin or one of
//     AllowedOrigins, else 403; CORS headers name the origin, never "*".
//  3. Bearer token, when configured: else 401, or 403 without a required
//     scope or profile; 429 first for an address past TokenFailures.
//  4. Body size, else 413; body time, else 408; body memory, else 503.
//  5. Sessions per client and requests per session, else 429; with
//     several tokens or an issuer, a session serves only the principal
//     that opened it, else 404.
//
// next never sees the Authorization header. Refusals are JSON-RPC error
// objects without an id.
func Guard(next http.Handler, opts Options) http.Handler {
	g := &guard{
		next:       next,
		tokens:     hashTokens(opts.BearerTokens, opts.Tokens),
		ownProfile: opts.Profile,
		oidc:       opts.OIDC,
		failures:   cmp.Or(opts.TokenFailures, NewTokenFailures(DefaultTokenFailures)),
		origins:    make(map[string]bool, len(opts.AllowedOrigins)),
		hosts:      make(map[string]bool, len(opts.AllowedHosts)),
		maxBody:    cmp.Or(max(opts.MaxBodyBytes, 0), DefaultMaxBodyBytes),
		log:        cmp.Or(opts.Logger, slog.New(slog.DiscardHandler)),
		owners:     newOwners(SessionIdleTTL),
		ownerOf:    opts.SessionOwner,
		proxies:    opts.TrustedProxies,

		bodyTimeout: cmp.Or(max(opts.BodyTimeout, 0), DefaultBodyTimeout),
		maxSessions: cmp.Or(max(opts.MaxSessionsPerClient, 0), DefaultMaxSessionsPerClient),
		maxStreams:  cmp.Or(max(opts.MaxStreamsPerSession, 0), DefaultMaxStreamsPerSession),
	}
	if opts.OIDC != nil {
		g.metadataURL = MetadataURL(resourceAt(opts.OIDC.opts.Resource, opts.Subresource))
	}
	// Room for one body of the most allowed size, at least.
	g.bodyMemory = max(cmp.Or(max(opts.MaxBodyMemory, 0), DefaultMaxBodyMemory), g.maxBody)
	g.bodies = semaphore.NewWeighted(g.bodyMemory)
	for _, o := range opts.AllowedOrigins {
		g.origins[strings.TrimSuffix(o, "/")] = true
	}
	for _, h := range opts.AllowedHosts {
		g.hosts[strings.ToLower(h)] = true
	}
	return g
}

type guard struct {
	next        http.Handler
	tokens      []staticToken
	ownProfile  string  // Options.Profile
	oidc        *Issuer // nil: no tokens from an issuer
	metadataURL string  // the protected-resource metadata, with oidc
	failures    *TokenFailures
	origins     map[string]bool
	hosts       map[string]bool
	maxBody     int64
	log         *slog.Logger
	owners      *owners                                      // sessions' principals and clients (SEC-06)
	ownerOf     func(context.Context, string) (string, bool) // a sealed session's principal (Options.SessionOwner)
	proxies     []netip.Prefix                               // trusted reverse proxies (Options.TrustedProxies)

	bodyTimeout time.Duration
	bodies      *semaphore.Weighted // bytes of request bodies held in memory, of bodyMemory
	bodyMemory  int64
	maxSessions int // per client
	maxStreams  int // requests in flight per session
}

// checkSite is Checks.CheckSite.
func (g *guard) checkSite(w http.ResponseWriter, r *http.Request) bool {
	if !g.hostAllowed(r.Host) {
		g.refuse(w, r, http.StatusForbidden, "host not allowed", "host", r.Host)
		return false
	}
	origin, fromBrowser := originOf(r)
	if fromBrowser && !g.originAllowed(origin) {
		g.refuse(w, r, http.StatusForbidden, "origin not allowed", "origin", origin)
		return false
	}
	if fromBrowser {
		setCORS(w.Header(), origin)
		if isPreflight(r) {
			answerPreflight(w)
			return false
		}
	}
	return true
}

func (g *guard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !g.checkSite(w, r) {
		return
	}
	p, ok := g.checkToken(w, r)
	if !ok {
		return
	}
	r2, release, status, err := g.forward(g.callerContext(r, p), w, r)
	if err != nil {
		if status == http.StatusServiceUnavailable {
			w.Header().Set("Retry-After", "1")
			w.Header().Set("Connection", "close") // rather than drain a body there is no room for
		}
		g.refuse(w, r, status, err.Error())
		return
	}
	defer release()
	g.serveSession(w, r2, p)
}

// callerContext is r's context marked with its caller, p.
func (g *guard) callerContext(r *http.Request, p principal) context.Context {
	ctx := r.Context()
	if p != noPrincipal {
		ctx = withCaller(ctx, p)
		// Only an issuer's token travels on (to a token exchange): a static
		// gateway token is meant for this gateway and no other server.
		if token, ok := bearerToken(r.Header.Get("Authorization")); ok && strings.HasPrefix(p.name, principalPrefix) {
			ctx = withCallerToken(ctx, token)
		}
	} else if !g.authRequired() { // loopback alone: the person at the machine
		ctx = context.WithValue(ctx, roleKey{}, roleAdmin)
	}
	return ctx
}

// forward returns the request next should see, with ctx: without
// Authorization (SEC-05), its body read into memory within the bounds (a
// wire.Body, which the pre-check takes without copying); release gives the
// memory back once the request is answered. r's header is copied only
// when it has a header to drop.
func (g *guard) forward(ctx context.Context, w http.ResponseWriter, r *http.Request) (_ *http.Request, release func(), status int, _ error) {
	if r.ContentLength > g.maxBody {
		return nil, nil, http.StatusRequestEntityTooLarge, errBodyTooLarge(g.maxBody)
	}
	r2 := r.WithContext(ctx)
	if len(r.Header.Values("Authorization")) > 0 || len(r.Header.Values("Proxy-Authorization")) > 0 {
		r2.Header = r.Header.Clone()
		r2.Header.Del("Authorization")
		r2.Header.Del("Proxy-Authorization")
	}
	if r.Body == nil || r.Body == http.NoBody {
		return r2, func() {}, 0, nil
	}
	held := g.maxBody // what an unknown length may come to
	if r.ContentLength >= 0 {
		held = r.ContentLength
	}
	if !g.bodies.TryAcquire(held) {
		return nil, nil, http.StatusServiceUnavailable, fmt.Errorf(
			"the gateway holds %d bytes of request bodies, its most: retry shortly", g.bodyMemory)
	}
	body, status, err := g.readBody(w, r)
	if err != nil {
		g.bodies.Release(held)
		return nil, nil, status, err
	}
	g.bodies.Release(held - int64(len(body)))
	b := wire.NewBody(body)
	r2.Body, r2.ContentLength, r2.GetBody = b, int64(len(body)), b.Reopen
	return r2, func() { g.bodies.Release(int64(len(body))) }, 0, nil
}

// readBody reads r's body whole within the body timeout, a read deadline
// cleared after it so that a long response stream is not cut.
func (g *guard) readBody(w http.ResponseWriter, r *http.Request) ([]byte, int, error) {
	rc := http.NewResponseController(w)
	if err := rc.SetReadDeadline(time.Now().Add(g.bodyTimeout)); err == nil {
		defer func() { _ = rc.SetReadDeadline(time.Time{}) }()
	}
	body, err := wire.ReadAll(http.MaxBytesReader(w, r.Body, g.maxBody), r.ContentLength)
	var tooLarge *http.MaxBytesError
	var netErr net.Error
	switch {
	case errors.As(err, &tooLarge):
		return nil, http.StatusRequestEntityTooLarge, errBodyTooLarge(g.maxBody)
	case errors.As(err, &netErr) && netErr.Timeout():
		w.Header().Set("Connection", "close") // draining would wait on the slow client again
		return nil, http.StatusRequestTimeout, fmt.Errorf("request body not received within %s", g.bodyTimeout)
	case err != nil:
		w.Header().Set("Connection", "close")
		return nil, http.StatusBadRequest, errors.New("reading request body")
	}
	return body, 0, nil
}

func errBodyTooLarge(limit int64) error {
	return fmt.Errorf("request body larger than %d bytes", limit)
}

// hostAllowed implements DNS-rebinding protection (SEC-02).
func (g *guard) hostAllowed(hostport string) bool {
	hostport = strings.ToLower(hostport)
	if hostport == "" {
		return false
	}
	host := hostOnly(hostport)
	return loopback.Host(host) || g.hosts[host] || g.hosts[hostport]
}

// originOf returns the Origin header and whether one was sent at all: an
// empty Origin header counts as sent (and is refused).
func originOf(r *http.Request) (string, bool) {
	v, ok := r.Header["Origin"]
	if !ok {
		return "", false
	}
	if len(v) != 1 {
		return strings.Join(v, ", "), true
	}
	return v[0], true
}

// originAllowed implements SEC-01.
func (g *guard) originAllowed(origin string) bool {
	return origin != "" && (g.origins[origin] || isLoopbackOrigin(origin))
}

// isLoopbackOrigin reports whether origin is http(s)://host[:port] with a
// loopback host, and nothing else (no user, path, query or fragment).
func isLoopbackOrigin(origin string) bool {
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	if u.Opaque != "" || u.User != nil || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || (u.Path != "" && u.Path != "/") {
		return false
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return false
		}
	}
	return loopback.Host(strings.ToLower(u.Hostname()))
}

// hostOnly strips the port and IPv6 brackets from a Host value.
func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return strings.TrimSuffix(strings.TrimPrefix(hostport, "["), "]")
}

// CORS for browsers on an allowed origin.
const (
	corsAllowMethods  = "GET, POST, DELETE, OPTIONS"
	corsAllowHeaders  = "Authorization, Content-Type, Accept, Mcp-Session-Id, MCP-Protocol-Version, Last-Event-ID"
	corsExposeHeaders = "Mcp-Session-Id, MCP-Protocol-Version, WWW-Authenticate"
)

func setCORS(h http.Header, origin string) {
	h.Set("Access-Control-Allow-Origin", origin)
	h.Set("Access-Control-Expose-Headers", corsExposeHeaders)
	h.Add("Vary", "Origin")
}

func isPreflight(r *http.Request) bool {
	return r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != ""
}

func answerPreflight(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Access-Control-Allow-Methods", corsAllowMethods)
	h.Set("Access-Control-Allow-Headers", corsAllowHeaders)
	h.Set("Access-Control-Max-Age", "600")
	h.Add("Vary", "Access-Control-Request-Method")
	h.Add("Vary", "Access-Control-Request-Headers")
	w.WriteHeader(http.StatusNoContent)
}

// staticToken is a configured token's SHA-256 (so comparing takes the
// same time whatever the lengths), profile and role.
type staticToken struct {
	sum     [sha256.Size]byte
	profile string
	role    role
}

// hashTokens keeps the non-empty tokens.
func hashTokens(plain []string, tokens []Token) []staticToken {
	var out []staticToken
	add := func(t Token, r role) {
		if t.Token = strings.TrimSpace(t.Token); t.Token != "" {
			out = append(out, staticToken{sha256.Sum256([]byte(t.Token)), t.Profile, r})
		}
	}
	for _, t := range plain {
		add(Token{Token: t}, roleWide)
	}
	for _, t := range tokens {
		var r role
		if t.Admin {
			r = roleAdmin
		}
		add(t, r)
	}
	return out
}

// bearerToken takes the token from "Bearer <token>"; the scheme is
// case-insensitive (RFC 7235).
func bearerToken(auth string) (string, bool) {
	scheme, token, ok := strings.Cut(auth, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}

// refuse writes a JSON-RPC error object without an id and logs why.
func (g *guard) refuse(w http.ResponseWriter, r *http.Request, status int, reason string, attrs ...any) {
	args := []any{"reason", reason, "status", status, "remote_addr", wire.LogSafe(r.RemoteAddr)}
	if client, via := g.clientAddr(r); via != "" {
		args = append(args[:len(args)-1], client, "proxy_addr", wire.LogSafe(r.RemoteAddr))
	}
	args = append(args, "method", wire.LogSafe(r.Method), "path", wire.LogSafe(r.URL.Path))
	for i := 0; i+1 < len(attrs); i += 2 {
		args = append(args, attrs[i], wire.LogSafe(fmt.Sprint(attrs[i+1])))
	}
	g.log.Warn("http request refused", args...)
	WriteRefusal(w, status, reason)
}

// WriteRefusal answers status with a JSON-RPC error object without an id
// (code -32600) carrying message.
func WriteRefusal(w http.ResponseWriter, status int, message string) {
	type rpcError struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
	body, _ := json.Marshal(struct {
		JSONRPC string   `json:"jsonrpc"`
		Error   rpcError `json:"error"`
	}{"2.0", rpcError{codeInvalidRequest, message}})
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)+1))
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
}

// CheckListen refuses to serve a non-loopback address (a host name other
// than localhost counts as one) without bearer tokens or an issuer in
// opts (SEC-03).
func CheckListen(addr string, opts Options) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("listen address %q: %w", addr, err)
	}
	if loopback.Host(strings.ToLower(host)) || len(hashTokens(opts.BearerTokens, opts.Tokens)) > 0 || opts.OIDC != nil {
		return nil
	}
	where := host
	if where == "" || where == "0.0.0.0" || where == "::" {
		where = "all interfaces"
	}
	return fmt.Errorf("refusing to serve HTTP on %s (%s) without authentication: "+
		"set http.bearer_tokens (or http.tokens, or http.oidc) in the config file (clients then send \"Authorization: Bearer <token>\"), "+
		"or listen on 127.0.0.1", addr, where)
}

// HTTPServerOptions are the connection timeouts of the HTTP server that
// serve --http runs. Zero values take the defaults in brackets.
type HTTPServerOptions struct {
	// HeaderTimeout bounds the reading of a request's headers
	// [DefaultHeaderTimeout]; a client that sends them slower is cut off.
	HeaderTimeout time.Duration
	// IdleTimeout closes a keep-alive connection with no request for this
	// long [DefaultIdleTimeout].
	IdleTimeout time.Duration
}

// Defaults of HTTPServerOptions.
const (
	DefaultHeaderTimeout = 10 * time.Second
	DefaultIdleTimeout   = 2 * time.Minute
)

// NewHTTPServer returns the server for h with opts' timeouts; none bounds
// a whole request (streams live as long as their calls; Guard bounds bodies).
func NewHTTPServer(h http.Handler, opts HTTPServerOptions) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: cmp.Or(max(opts.HeaderTimeout, 0), DefaultHeaderTimeout),
		IdleTimeout:       cmp.Or(max(opts.IdleTimeout, 0), DefaultIdleTimeout),
		MaxHeaderBytes:    64 << 10,
	}
}
