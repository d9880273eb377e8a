package frontdoor

// The HTTP front door: checks that run before a request reaches the MCP
// server when mcp-router serves streamable HTTP.

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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

// DefaultMaxBodyBytes is Options.MaxBodyBytes's default: the bound on one
// client message that the wire checks share.
const DefaultMaxBodyBytes = wire.MaxMessageBytes

// Defaults of Options' bounds on each client.
const (
	DefaultBodyTimeout          = 30 * time.Second
	DefaultMaxBodyMemory        = 64 << 20
	DefaultMaxSessionsPerClient = 64
	DefaultMaxStreamsPerSession = 32
)

// SessionIdleTTL is how long an HTTP session lives unused: the MCP server
// forgets it then, and so does Guard.
const SessionIdleTTL = 30 * time.Minute

// codeInvalidRequest is JSON-RPC's "Invalid Request", used for every refusal.
const codeInvalidRequest = -32600

// Options configures the HTTP front door. Zero values take the defaults in brackets.
type Options struct {
	// BearerTokens, when non-empty, makes every request need
	// "Authorization: Bearer <one of them>" (compared in constant time) or
	// get 401 with WWW-Authenticate: Bearer. Empty strings are ignored.
	BearerTokens []string
	// Tokens are more bearer tokens, each with the profile its callers
	// are served (see ProfileOf); they count as BearerTokens do.
	Tokens []Token
	// Profile is the name of the gateway's own profile: a token or claim
	// rule naming it is served as one naming none (ProfileOf is "").
	Profile string
	// OIDC, when set, also accepts JWTs from an OAuth/OIDC issuer (see
	// OIDCOptions, NewIssuer); a refused one gets 401 with
	// WWW-Authenticate naming the protected-resource metadata and
	// error="invalid_token".
	OIDC *Issuer
	// Subresource, with OIDC, is the path below OIDC's resource that the
	// Guard serves, such as "/all" for /mcp/all: its challenges name that
	// resource's own metadata, which ResourceMetadata and MetadataPaths
	// of the same Options serve (a client checks that the metadata names
	// the URL it connected to). "" is the resource itself.
	Subresource string
	// AllowedOrigins are extra allowed browser origins, matched exactly
	// (scheme://host[:port]). Loopback origins are always allowed.
	AllowedOrigins []string
	// AllowedHosts are extra allowed Host header names (with or without a
	// port) for non-loopback deployments. Loopback hosts are always allowed.
	AllowedHosts []string
	// MaxBodyBytes limits a request body [4 MiB]. A larger body gets 413 with
	// a JSON-RPC error body and never reaches the MCP server.
	MaxBodyBytes int64
	// BodyTimeout bounds the reading of one request body
	// [DefaultBodyTimeout]; a slower body gets 408.
	BodyTimeout time.Duration
	// MaxBodyMemory bounds the request bodies held in memory at once, in
	// bytes [DefaultMaxBodyMemory]. A body is held from when it is read
	// until its request is answered; a request that would go past the
	// bound gets 503 with Retry-After.
	MaxBodyMemory int64
	// MaxSessionsPerClient bounds the sessions one client may have open
	// [DefaultMaxSessionsPerClient]: a client is its bearer token when
	// tokens are configured, else its address (see TrustedProxies). Past it, a request
	// that would open a session gets 429.
	MaxSessionsPerClient int
	// MaxStreamsPerSession bounds the calls in flight in one session
	// (POSTed requests being answered), and apart from them its open GET
	// event streams, so a client's standalone stream takes no room from
	// its calls [DefaultMaxStreamsPerSession]. Past it, a request gets
	// 429; a DELETE, a notification and a response are always let through.
	MaxStreamsPerSession int
	// TokenFailures bounds the refused bearer tokens each client address
	// (see TrustedProxies) may send: past it, every request from the address gets 429 with
	// Retry-After until a share of the minute has passed. Nil makes the
	// Guard a limit of its own [NewTokenFailures(DefaultTokenFailures)];
	// Guards of several paths share one so that the limit holds across
	// them. Only with tokens or an issuer configured.
	TokenFailures *TokenFailures
	// TrustedProxies are the reverse proxies (addresses and CIDR blocks,
	// see ParseTrustedProxy) whose X-Forwarded-For, or Forwarded without
	// it, names the client: a request from one counts under the rightmost
	// forwarded address that is not itself trusted, for TokenFailures,
	// MaxSessionsPerClient and the log. Empty trusts no peer: every
	// request counts under its connection's peer, and the headers are
	// ignored.
	TrustedProxies []netip.Prefix
	// Logger gets one Warn line per refusal, with the reason, the
	// client's address (remote_addr; proxy_addr for the trusted proxy it
	// came through), method and path, never a token. Nil means silent.
	Logger *slog.Logger
	// SessionOwner, when set, names the principal a session id it knows
	// was issued to (Server.SessionOwner: a session sealed by another
	// replica), so that a session not seen here is taken on as that
	// principal's. Nil knows none.
	SessionOwner func(ctx context.Context, sessionID string) (principal string, ok bool)
}

// Guard wraps next, the MCP streamable HTTP handler, in the checks of
// SEC-01..SEC-05 and FI-12 of docs/reliability.md, in this order:
//
//  1. Host: a loopback name or IP (any port) or one of AllowedHosts, else
//     403; this stops DNS rebinding.
//  2. Origin: absent (non-browser client), an http(s) loopback origin or
//     one of AllowedOrigins, else 403. A CORS preflight from an allowed
//     origin is answered here; responses to allowed origins carry CORS
//     headers naming that origin, never "*".
//  3. Bearer token, when configured (a static one, or a JWT from the
//     issuer of OIDC): else 401, or 403 for a valid token without a
//     required scope or a profile; 429 with Retry-After, before any
//     token is looked at, for a remote address past TokenFailures. The
//     caller's principal and profile mark the request's context.
//  4. Body size, else 413; body read within BodyTimeout, else 408; room
//     among the bodies held in memory (MaxBodyMemory), else 503.
//  5. Sessions per client and requests in flight per session, else 429;
//     with several tokens or an issuer, session ownership: a session is
//     used only by the principal and profile that opened it, else 404
//     (SEC-06).
//
// The Authorization header is removed before next sees the request, so
// the client's token never travels further. Refusals are JSON-RPC error
// objects without an id.
func Guard(next http.Handler, opts Options) http.Handler {
	g := &guard{
		next:    next,
		origins: make(map[string]bool, len(opts.AllowedOrigins)),
		hosts:   make(map[string]bool, len(opts.AllowedHosts)),
		maxBody: cmp.Or(max(opts.MaxBodyBytes, 0), DefaultMaxBodyBytes),
		log:     opts.Logger,
		owners:  newOwners(SessionIdleTTL),
		ownerOf: opts.SessionOwner,
		proxies: opts.TrustedProxies,

		bodyTimeout: cmp.Or(max(opts.BodyTimeout, 0), DefaultBodyTimeout),
		maxSessions: cmp.Or(max(opts.MaxSessionsPerClient, 0), DefaultMaxSessionsPerClient),
		maxStreams:  cmp.Or(max(opts.MaxStreamsPerSession, 0), DefaultMaxStreamsPerSession),
	}
	g.tokens, g.profiles, g.roles = hashTokens(opts.BearerTokens, opts.Tokens)
	g.ownProfile = opts.Profile
	g.failures = cmp.Or(opts.TokenFailures, NewTokenFailures(DefaultTokenFailures))
	if opts.OIDC != nil {
		g.oidc = opts.OIDC
		g.metadataURL = MetadataURL(resourceAt(opts.OIDC.opts.Resource, opts.Subresource))
	}
	// Room for one body of the most allowed size, at least.
	g.bodyMemory = max(cmp.Or(max(opts.MaxBodyMemory, 0), DefaultMaxBodyMemory), g.maxBody)
	g.bodies = semaphore.NewWeighted(g.bodyMemory)
	if g.log == nil {
		g.log = slog.New(slog.DiscardHandler)
	}
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
	tokens      [][sha256.Size]byte
	profiles    []string // of each token
	roles       []role   // of each token
	ownProfile  string   // Options.Profile
	oidc        *Issuer  // nil: no tokens from an issuer
	metadataURL string   // the protected-resource metadata, with oidc
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

// checkSite refuses a request whose Host or Origin is not allowed, and
// answers a browser's CORS preflight; it reports whether the request goes
// on.
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
	r2, release, status, err := g.forward(w, r)
	if err != nil {
		if status == http.StatusServiceUnavailable {
			w.Header().Set("Retry-After", "1")
			w.Header().Set("Connection", "close") // rather than drain a body there is no room for
		}
		g.refuse(w, r, status, err.Error())
		return
	}
	defer release()
	if p != noPrincipal {
		ctx := withCaller(r2.Context(), p)
		// Only an issuer's token travels on (to a token exchange): a static
		// gateway token is meant for this gateway and no other server.
		if token, ok := bearerToken(r.Header.Get("Authorization")); ok && strings.HasPrefix(p.name, principalPrefix) {
			ctx = withCallerToken(ctx, token)
		}
		r2 = r2.WithContext(ctx)
	} else if len(g.tokens) == 0 && g.oidc == nil { // loopback alone: the person at the machine
		r2 = r2.WithContext(context.WithValue(r2.Context(), roleKey{}, roleAdmin))
	}
	g.serveSession(w, r2, p)
}

// forward returns the request next should see: without Authorization
// (SEC-05), and with the body read into memory once it is known to fit,
// within the body timeout and the memory bound; release gives its memory
// back once the request is answered.
func (g *guard) forward(w http.ResponseWriter, r *http.Request) (_ *http.Request, release func(), status int, _ error) {
	if r.ContentLength > g.maxBody {
		return nil, nil, http.StatusRequestEntityTooLarge, errBodyTooLarge(g.maxBody)
	}
	r2 := r.Clone(r.Context())
	r2.Header.Del("Authorization")
	r2.Header.Del("Proxy-Authorization")
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
	r2.Body = io.NopCloser(bytes.NewReader(body))
	r2.ContentLength = int64(len(body))
	r2.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	return r2, func() { g.bodies.Release(int64(len(body))) }, 0, nil
}

// readBody reads r's body whole, within the body timeout: the connection's
// read deadline is set for the body alone, and cleared after it, so that
// a long-lived response stream is not cut.
func (g *guard) readBody(w http.ResponseWriter, r *http.Request) ([]byte, int, error) {
	rc := http.NewResponseController(w)
	if err := rc.SetReadDeadline(time.Now().Add(g.bodyTimeout)); err == nil {
		defer func() { _ = rc.SetReadDeadline(time.Time{}) }()
	}
	// MaxBytesReader also tells the server to close the connection rather
	// than drain the rest of an oversized body.
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, g.maxBody))
	var tooLarge *http.MaxBytesError
	var netErr net.Error
	switch {
	case errors.As(err, &tooLarge):
		return nil, http.StatusRequestEntityTooLarge, errBodyTooLarge(g.maxBody)
	case errors.As(err, &netErr) && netErr.Timeout():
		// Closing after the reply spares the server draining the rest of
		// the body first, which would wait on the slow client again.
		w.Header().Set("Connection", "close")
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
	if origin == "" {
		return false
	}
	if g.origins[origin] {
		return true
	}
	return isLoopbackOrigin(origin)
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

// hostOnly strips the port and IPv6 brackets from a Host header value.
func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return strings.TrimSuffix(strings.TrimPrefix(hostport, "["), "]")
}

// CORS for browsers on an allowed origin. Authorization, Content-Type and
// the MCP headers are not CORS-safelisted, so a browser asks first.
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

// hashTokens keeps SHA-256 digests of the non-empty tokens, so comparing
// takes the same time whatever the lengths, and each one's profile.
func hashTokens(plain []string, tokens []Token) ([][sha256.Size]byte, []string, []role) {
	var sums [][sha256.Size]byte
	var profiles []string
	var roles []role
	add := func(t Token, r role) {
		if t.Token = strings.TrimSpace(t.Token); t.Token != "" {
			sums = append(sums, sha256.Sum256([]byte(t.Token)))
			profiles = append(profiles, t.Profile)
			roles = append(roles, r)
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
	return sums, profiles, roles
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
// (code -32600) carrying message: how the front door, and the handlers
// behind it, refuse a request before any message of it is answered.
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

// CheckListen refuses to serve a non-loopback address without
// authentication (SEC-03): bearer tokens or an issuer in opts.
// "127.0.0.1:8080", "[::1]:0" and "localhost:9" are fine without;
// "0.0.0.0:8080", ":8080", "192.168.1.5:80" and "[::]:80" need it. It does
// no I/O: a host name other than localhost counts as not loopback.
func CheckListen(addr string, opts Options) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("listen address %q: %w", addr, err)
	}
	if loopback.Host(strings.ToLower(host)) || authConfigured(opts) {
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

// authConfigured reports whether opts make requests need a token.
func authConfigured(opts Options) bool {
	sums, _, _ := hashTokens(opts.BearerTokens, opts.Tokens)
	return len(sums) > 0 || opts.OIDC != nil
}
