package upstreamauth

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
)

// Authorizer gives requests to one upstream their Authorization header.
// One Authorizer serves every request of the upstream's shared connection,
// whoever the caller, so the header is chosen per request.
type Authorizer struct {
	upstream, url string
	vault         atomic.Pointer[Vault] // nil: none (yet, with openVault)
	openVault     func() (*Vault, error)
	exch          *exchanger // nil: no token exchange
	perUser       bool
	principal     func(context.Context) string
	client        *http.Client
	logger        *slog.Logger

	mu       sync.Mutex
	handlers map[string]handlerFor // by principal ("" the gateway's)
	sent     [recentTokens]string  // the tokens sent last, for Redact
	next     int                   // where the next one goes in sent
	vaultTry time.Time             // when openVault was last tried
}

const recentTokens = 16 // how many of the tokens it sent an Authorizer redacts

// RedactedToken replaces a token in text.
const RedactedToken = "[redacted upstream token]"

// handlerFor is mcp-go's handler for one login, and its client.
type handlerFor struct {
	h      *transport.OAuthHandler
	client oauthClient
}

// oauthClient is the part of a Record that a handler is made for.
type oauthClient struct {
	id, secret, authMethod, metadataURL, metadataRoot, tokenEndpoint string
}

const maxHandlers = 1024 // per-caller handlers an Authorizer keeps

// AuthorizerOptions configure NewAuthorizer.
type AuthorizerOptions struct {
	// Upstream and URL name the upstream and where it lives.
	Upstream, URL string
	// Config is its auth settings; nil means none (a stored login is
	// still used).
	Config *Config
	// Vault holds logins; nil means none (only token exchange), unless
	// OpenVault gives one.
	Vault *Vault
	// OpenVault, when Vault is nil, opens the vault once it can (after the
	// first login makes the key), tried at most once a second.
	OpenVault func() (*Vault, error)
	// HTTPClient reaches the authorization servers; nil means a new one.
	// It is bounded (see boundClient).
	HTTPClient *http.Client
	// Principal names the caller of a request (for auth.per_user); nil or
	// "" means the gateway's own login.
	Principal func(context.Context) string
	// Logger gets token exchange failures (never tokens); nil is silent.
	Logger *slog.Logger
}

// NewAuthorizer makes an upstream's Authorizer; it does no I/O.
func NewAuthorizer(opts AuthorizerOptions) *Authorizer {
	opts.HTTPClient = boundClient(opts.HTTPClient)
	opts.Logger = cmp.Or(opts.Logger, slog.New(slog.DiscardHandler))
	if opts.Principal == nil {
		opts.Principal = func(context.Context) string { return "" }
	}
	a := &Authorizer{upstream: opts.Upstream, url: opts.URL, openVault: opts.OpenVault, principal: opts.Principal, client: opts.HTTPClient,
		logger: opts.Logger, handlers: make(map[string]handlerFor)}
	a.vault.Store(opts.Vault)
	if opts.Config != nil {
		a.perUser = opts.Config.PerUser
		if opts.Config.TokenExchange != nil {
			a.exch = &exchanger{cfg: *opts.Config.TokenExchange, client: opts.HTTPClient, cache: make(map[[32]byte]exchanged)}
		}
	}
	return a
}

// Header is the Authorization header for a request made in ctx: a token
// exchanged for the caller's when configured and ctx carries one, else the
// stored login's (the caller's own with auth.per_user), refreshed; else
// none. A failed exchange leaves it empty, never the gateway's login, so
// the upstream refuses the call rather than serve it as someone else.
func (a *Authorizer) Header(ctx context.Context) map[string]string {
	if a.exch != nil {
		caller := callerToken(ctx)
		if caller == "" && a.principal(ctx) != "" { // a static gateway token is not exchanged
			return map[string]string{"Authorization": ""}
		}
		if caller != "" {
			tok, err := a.exch.token(ctx, caller)
			if err != nil {
				a.logger.Warn("token exchange failed", "upstream", a.upstream, "err", err)
				return map[string]string{"Authorization": ""}
			}
			a.remember(tok)
			return map[string]string{"Authorization": "Bearer " + tok}
		}
	}
	h, err := a.oauthHandler(ctx, a.subject(ctx))
	if err != nil {
		if !errors.Is(err, ErrNoLogin) {
			a.logger.Warn("reading the upstream login failed", "upstream", a.upstream, "err", err)
		}
		return nil
	}
	v, err := h.GetAuthorizationHeader(ctx)
	if err != nil {
		if !errors.Is(err, transport.ErrOAuthAuthorizationRequired) {
			a.logger.Warn("upstream token unavailable", "upstream", a.upstream, "err", err)
		}
		return nil // the upstream answers 401: auth_required
	}
	if _, tok, ok := strings.Cut(v, " "); ok {
		a.remember(tok)
	}
	return map[string]string{"Authorization": v}
}

// subject is whose login serves ctx's request ("" is the gateway's).
func (a *Authorizer) subject(ctx context.Context) string {
	if a.perUser {
		return a.principal(ctx)
	}
	return ""
}

// remember adds tok to the tokens Redact replaces, unless it is there.
func (a *Authorizer) remember(tok string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if slices.Contains(a.sent[:], tok) {
		return
	}
	a.sent[a.next] = tok
	a.next = (a.next + 1) % recentTokens
}

// Redact replaces in t the tokens this Authorizer sent most recently, for
// an upstream that quotes them back.
func (a *Authorizer) Redact(t string) string {
	a.mu.Lock()
	sent := a.sent // a copy: the text is scanned without the lock
	a.mu.Unlock()
	for _, tok := range sent {
		if len(tok) >= 8 && strings.Contains(t, tok) {
			t = strings.ReplaceAll(t, tok, RedactedToken)
		}
	}
	return t
}

const vaultRetry = time.Second // between two tries of AuthorizerOptions.OpenVault

// logins is the vault, opened with openVault if it can be; nil if none.
func (a *Authorizer) logins() *Vault {
	if v := a.vault.Load(); v != nil || a.openVault == nil {
		return v
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if v := a.vault.Load(); v != nil {
		return v
	}
	if now := time.Now(); now.Sub(a.vaultTry) >= vaultRetry {
		a.vaultTry = now
		v, err := a.openVault()
		if err != nil && !errors.Is(err, ErrNoKey) {
			a.logger.Warn("upstream logins unavailable", "upstream", a.upstream, "err", err)
		}
		if err == nil {
			a.vault.Store(v)
		}
	}
	return a.vault.Load()
}

// oauthHandler is mcp-go's handler for subject's stored login, remade
// when a new login changed the client.
func (a *Authorizer) oauthHandler(ctx context.Context, subject string) (*transport.OAuthHandler, error) {
	vault := a.logins()
	if vault == nil {
		return nil, ErrNoLogin
	}
	rec, err := vault.Load(ctx, a.url, subject)
	if err != nil {
		return nil, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	key := oauthClient{rec.ClientID, rec.ClientSecret, rec.AuthMethod, rec.ResourceMetadataURL, rec.ResourceMetadataRoot, rec.TokenEndpoint}
	hf, ok := a.handlers[subject]
	if !ok || hf.client != key {
		if len(a.handlers) >= maxHandlers {
			clear(a.handlers)
		}
		client := pinTokenEndpoint(a.client, rec.TokenEndpoint)
		hf = handlerFor{h: newHandler(a.url, rec, "", tokenStore{vault: vault, resource: a.url, subject: subject}, client), client: key}
		a.handlers[subject] = hf
	}
	return hf.h, nil
}

// newHandler makes mcp-go's OAuthHandler for a client of the upstream.
func newHandler(upstreamURL string, rec *Record, redirect string, store transport.TokenStore, client *http.Client) *transport.OAuthHandler {
	if rec.ResourceMetadataRoot != "" {
		client = rootAlias(client, upstreamURL, rec.ResourceMetadataRoot)
	}
	h := transport.NewOAuthHandler(transport.OAuthConfig{
		ClientID:                     rec.ClientID,
		ClientSecret:                 rec.ClientSecret,
		TokenEndpointAuthMethod:      rec.AuthMethod,
		RedirectURI:                  redirect,
		Scopes:                       rec.Scopes,
		TokenStore:                   store,
		ProtectedResourceMetadataURL: rec.ResourceMetadataURL,
		PKCEEnabled:                  true,
		HTTPClient:                   client,
	})
	h.SetBaseURL(upstreamURL)
	return h
}

// rootAlias is client answering a request for the upstream's path-aware
// protected resource metadata URL from root, the root well-known URL
// that serves it: mcp-go's discovery does not fall back to the root.
func rootAlias(client *http.Client, upstreamURL, root string) *http.Client {
	urls := resourceMetadataURLs(upstreamURL, "")
	to, err := url.Parse(root)
	if len(urls) < 2 || err != nil {
		return client
	}
	c := *client
	c.Transport = aliasTransport{from: urls[0], to: to, next: cmp.Or[http.RoundTripper](client.Transport, http.DefaultTransport)}
	return &c
}

type aliasTransport struct {
	from string
	to   *url.URL
	next http.RoundTripper
}

func (a aliasTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method != http.MethodGet || r.URL.String() != a.from {
		return a.next.RoundTrip(r)
	}
	r = r.Clone(r.Context())
	r.URL, r.Host = a.to, ""
	return a.next.RoundTrip(r)
}

// Observe wraps the upstream's HTTP transport to catch step-up requests:
// a 403 insufficient_scope records the scopes for the next `auth login`
// and reaches the MCP client as a 401, so the call fails auth_required.
func (a *Authorizer) Observe(next http.RoundTripper) http.RoundTripper {
	return stepUp{a: a, next: next}
}

type stepUp struct {
	a    *Authorizer
	next http.RoundTripper
}

func (s stepUp) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := s.next.RoundTrip(r)
	if err != nil || resp.StatusCode != http.StatusForbidden {
		return resp, err
	}
	var scope string
	insufficient := false
	for _, v := range resp.Header.Values("WWW-Authenticate") {
		if p := bearerParams(v); p != nil && p["error"] == "insufficient_scope" {
			insufficient, scope = true, p["scope"]
			break
		}
	}
	if !insufficient {
		return resp, nil
	}
	s.a.needScopes(r.Context(), strings.Fields(scope))
	resp.StatusCode, resp.Status = http.StatusUnauthorized, "401 Unauthorized (403 insufficient_scope)"
	return resp, nil
}

// needScopes adds scopes to those the login of ctx's caller needs.
func (a *Authorizer) needScopes(ctx context.Context, scopes []string) {
	vault := a.logins()
	if vault == nil || len(scopes) == 0 {
		return
	}
	subject := a.subject(ctx)
	rec, err := vault.Load(ctx, a.url, subject)
	if err != nil {
		return // no login to step up: the next one asks for the challenge's scope anyway
	}
	merged := union(rec.ScopesNeeded, scopes)
	if len(merged) == len(rec.ScopesNeeded) {
		return
	}
	rec.ScopesNeeded = merged
	if err := vault.Save(ctx, a.url, subject, rec); err != nil {
		a.logger.Warn("recording the scopes an upstream asked for failed", "upstream", a.upstream, "err", err)
	}
}

// union is a's and b's words, each once, in order, at most 64.
func union(a, b []string) []string {
	out := make([]string, 0, len(a)+len(b))
	for _, w := range append(append([]string(nil), a...), b...) {
		if w != "" && !slices.Contains(out, w) && len(out) < 64 {
			out = append(out, w)
		}
	}
	return out
}
