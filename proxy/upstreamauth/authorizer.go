package upstreamauth

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
)

// Authorizer gives requests to one upstream their Authorization header.
// One Authorizer serves every request of the upstream's shared connection,
// whoever the caller, so the header is chosen per request.
type Authorizer struct {
	upstream, url string
	vault         *Vault
	exch          *exchanger // nil: no token exchange
	client        *http.Client
	logger        *slog.Logger

	mu      sync.Mutex
	handler *transport.OAuthHandler
	client4 Record // the record handler was made for (client fields only)
}

// AuthorizerOptions configure NewAuthorizer.
type AuthorizerOptions struct {
	// Upstream and URL name the upstream and where it lives.
	Upstream, URL string
	// Config is its auth settings; nil means none (a stored login is
	// still used).
	Config *Config
	// Vault holds logins; nil means none (only token exchange).
	Vault *Vault
	// HTTPClient reaches the authorization servers; nil means one with a
	// 30s timeout.
	HTTPClient *http.Client
	// Logger gets token exchange failures (never tokens); nil is silent.
	Logger *slog.Logger
}

// NewAuthorizer makes an upstream's Authorizer; it does no I/O.
func NewAuthorizer(opts AuthorizerOptions) *Authorizer {
	if opts.HTTPClient == nil {
		opts.HTTPClient = &http.Client{Timeout: 30 * time.Second}
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	a := &Authorizer{upstream: opts.Upstream, url: opts.URL, vault: opts.Vault, client: opts.HTTPClient, logger: opts.Logger}
	if opts.Config != nil && opts.Config.TokenExchange != nil {
		a.exch = newExchanger(*opts.Config.TokenExchange, opts.HTTPClient)
	}
	return a
}

// Header is the Authorization header for a request made in ctx: a token
// exchanged for the caller's when token exchange is configured and ctx
// carries one, else the stored login's (refreshed if it expired), else
// none. When the exchange fails the header is left empty, never filled
// with the gateway's own login: the upstream then refuses the call (401)
// rather than serve it as someone else.
func (a *Authorizer) Header(ctx context.Context) map[string]string {
	if a.exch != nil {
		if caller := callerToken(ctx); caller != "" {
			tok, err := a.exch.token(ctx, caller)
			if err != nil {
				a.logger.Warn("token exchange failed", "upstream", a.upstream, "err", err)
				return map[string]string{"Authorization": ""}
			}
			return map[string]string{"Authorization": "Bearer " + tok}
		}
	}
	h, err := a.oauthHandler(ctx)
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
	return map[string]string{"Authorization": v}
}

// oauthHandler is mcp-go's handler for the stored login's client, made
// again when a new login changed the client.
func (a *Authorizer) oauthHandler(ctx context.Context) (*transport.OAuthHandler, error) {
	if a.vault == nil {
		return nil, ErrNoLogin
	}
	rec, err := a.vault.Load(ctx, a.upstream, "")
	if err != nil {
		return nil, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	key := Record{ClientID: rec.ClientID, ClientSecret: rec.ClientSecret, AuthMethod: rec.AuthMethod, ResourceMetadataURL: rec.ResourceMetadataURL,
		ResourceMetadataRoot: rec.ResourceMetadataRoot}
	if a.handler == nil || !sameClient(a.client4, key) {
		a.handler = newHandler(a.url, rec, "", tokenStore{vault: a.vault, upstream: a.upstream}, a.client)
		a.client4 = key
	}
	return a.handler, nil
}

func sameClient(a, b Record) bool {
	return a.ClientID == b.ClientID && a.ClientSecret == b.ClientSecret && a.AuthMethod == b.AuthMethod &&
		a.ResourceMetadataURL == b.ResourceMetadataURL && a.ResourceMetadataRoot == b.ResourceMetadataRoot
}

// newHandler makes mcp-go's OAuthHandler for a client of the upstream at
// url.
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
// protected resource metadata URL (/.well-known/oauth-protected-resource/PATH)
// from root, the root well-known URL where the upstream serves it. RFC
// 9728 and the MCP authorization spec let a client fall back to the root;
// mcp-go's discovery does not, and would otherwise look for the
// authorization server at the upstream's own origin.
func rootAlias(client *http.Client, upstreamURL, root string) *http.Client {
	urls := resourceMetadataURLs(upstreamURL, "")
	to, err := url.Parse(root)
	if len(urls) < 2 || err != nil {
		return client
	}
	next := client.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	c := *client
	c.Transport = aliasTransport{from: urls[0], to: to, next: next}
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
