// Package oauthtest runs, inside tests, an OpenID provider (zitadel's op
// with its example storage: PKCE, refresh tokens, token exchange) and an
// MCP server it protects (mcp-go's streamable HTTP server behind a bearer
// check that answers 401 with an RFC 9728 resource_metadata challenge and
// serves that metadata). Browser plays the person at the login form.
//
// Only tests import it: the gateway binary does not link the provider.
package oauthtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/zitadel/oidc/v3/example/server/exampleop"
	"github.com/zitadel/oidc/v3/example/server/storage"
	"github.com/zitadel/oidc/v3/pkg/op"
	"golang.org/x/oauth2"
	"golang.org/x/text/language"
)

// User is a person the provider knows. Admins (all but Dan) may have
// their tokens exchanged (the example storage's rule for token exchange
// without an actor).
type User struct{ ID, Username, Password string }

// The provider's users.
var (
	Alice = User{ID: "alice", Username: "alice", Password: "alice-password"}
	Bob   = User{ID: "bob", Username: "bob", Password: "bob-password"}
	Carol = User{ID: "carol", Username: "carol", Password: "carol-password"}
	Dan   = User{ID: "dan", Username: "dan", Password: "dan-password"}
)

// Clients registered with the provider.
const (
	// GatewayClient is a public native client for the gateway's login
	// (any loopback port, PKCE).
	GatewayClient = "mcp-router"
	// ExchangeClient and ExchangeSecret may exchange tokens.
	ExchangeClient = "mcp-router-exchange"
	ExchangeSecret = "exchange-secret-0123456789"
	// CallerClient is the downstream callers' own client.
	CallerClient = "caller-app"
	// JWTCallerClient is a callers' client whose access tokens are JWTs
	// (signed by the provider, audience JWTCallerClient), as a gateway
	// that checks tokens itself takes them.
	JWTCallerClient = "caller-app-jwt"
	// loopback redirect registered for the native clients (any port)
	loopbackRedirect = "http://127.0.0.1/callback"
)

// Provider is a running OpenID provider.
type Provider struct {
	// Issuer is its URL.
	Issuer string
	srv    *httptest.Server
}

// NewProvider starts a provider on a loopback port; it stops with the test.
func NewProvider(t testing.TB) *Provider {
	t.Helper()
	var handler atomic.Pointer[http.Handler]
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { (*handler.Load()).ServeHTTP(w, r) }))
	t.Cleanup(srv.Close)
	clients := map[string]*storage.Client{
		GatewayClient:   storage.NativeClient(GatewayClient, loopbackRedirect),
		CallerClient:    storage.NativeClient(CallerClient, loopbackRedirect),
		JWTCallerClient: storage.NativeClient(JWTCallerClient, loopbackRedirect),
		ExchangeClient:  storage.WebClient(ExchangeClient, ExchangeSecret, "http://127.0.0.1/unused"),
	}
	st := jwtClients{storage.NewStorageWithClients(users{}, clients)}
	h := http.Handler(exampleop.SetupServer(srv.URL, st, nil, false, op.WithLogger(slog.New(slog.DiscardHandler))))
	handler.Store(&h)
	return &Provider{Issuer: srv.URL, srv: srv}
}

// jwtClients is the example storage, with JWTCallerClient issuing JWT
// access tokens (the example's clients all issue opaque ones).
type jwtClients struct{ *storage.Storage }

func (s jwtClients) GetClientByClientID(ctx context.Context, id string) (op.Client, error) {
	c, err := s.Storage.GetClientByClientID(ctx, id)
	if err != nil || id != JWTCallerClient {
		return c, err
	}
	return jwtClient{c}, nil
}

type jwtClient struct{ op.Client }

func (jwtClient) AccessTokenType() op.AccessTokenType { return op.AccessTokenTypeJWT }

// users is the provider's user store: Alice, Bob and Carol, admins, and
// Dan, who is not.
type users struct{}

func (users) user(u User) *storage.User {
	return &storage.User{ID: u.ID, Username: u.Username, Password: u.Password, FirstName: u.ID, LastName: "Test",
		Email: u.ID + "@example.com", EmailVerified: true, PreferredLanguage: language.English, IsAdmin: u != Dan}
}

func (s users) find(match func(User) bool) *storage.User {
	for _, u := range []User{Alice, Bob, Carol, Dan} {
		if match(u) {
			return s.user(u)
		}
	}
	return nil
}

func (s users) GetUserByID(id string) *storage.User {
	return s.find(func(u User) bool { return u.ID == id })
}

func (s users) GetUserByUsername(name string) *storage.User {
	return s.find(func(u User) bool { return u.Username == name })
}

func (users) ExampleClientID() string { return "service" }

// TokenEndpoint is the provider's token endpoint.
func (p *Provider) TokenEndpoint() string { return p.Issuer + "/oauth/token" }

// Revoke revokes a token the gateway client holds (RFC 7009).
func (p *Provider) Revoke(ctx context.Context, token string) error {
	form := url.Values{"token": {token}, "client_id": {GatewayClient}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.Issuer+"/revoke", strings.NewReader(form.Encode()))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return fmt.Errorf("revoke: HTTP %d: %s", resp.StatusCode, b)
	}
	return nil
}

// Subject asks the provider whose access token is (its userinfo).
func (p *Provider) Subject(ctx context.Context, token string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.Issuer+"/userinfo", nil)
	if err != nil {
		return "", err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("userinfo: HTTP %d", resp.StatusCode)
	}
	var info struct {
		Sub string `json:"sub"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&info); err != nil || info.Sub == "" {
		return "", fmt.Errorf("userinfo: no sub (%v)", err)
	}
	return info.Sub, nil
}

var loginID = regexp.MustCompile(`name="id" value="([^"]+)"`)

// Authorize is the person's browser: it opens authURL, signs in as u at
// the provider's login form and follows the redirects. When a redirect
// goes to a URL starting with stopAt ("" for none) it is not followed but
// returned; otherwise the last URL reached is returned (such as a
// loopback listener's, which got the code).
func (p *Provider) Authorize(ctx context.Context, authURL string, u User, stopAt string) (*url.URL, error) {
	jar, _ := cookiejar.New(nil)
	var stopped *url.URL
	c := &http.Client{Jar: jar, CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if stopAt != "" && strings.HasPrefix(req.URL.String(), stopAt) {
			stopped = req.URL
			return http.ErrUseLastResponse
		}
		if len(via) > 10 {
			return errors.New("too many redirects")
		}
		return nil
	}}
	get := func(method, target string, form url.Values) (*http.Response, string, error) {
		var body io.Reader
		if form != nil {
			body = strings.NewReader(form.Encode())
		}
		req, err := http.NewRequestWithContext(ctx, method, target, body)
		if err != nil {
			return nil, "", err
		}
		if form != nil {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		resp, err := c.Do(req)
		if err != nil {
			return nil, "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		return resp, string(b), err
	}
	resp, page, err := get(http.MethodGet, authURL, nil)
	if err != nil {
		return nil, fmt.Errorf("opening the authorization URL: %w", err)
	}
	if stopped != nil {
		return stopped, nil // the provider redirected at once (an error)
	}
	m := loginID.FindStringSubmatch(page)
	if m == nil {
		return nil, fmt.Errorf("no login form at %s (HTTP %d): %.300s", resp.Request.URL, resp.StatusCode, page)
	}
	form := url.Values{"id": {m[1]}, "username": {u.Username}, "password": {u.Password}}
	resp, page, err = get(http.MethodPost, p.Issuer+"/login/username", form)
	if err != nil {
		return nil, fmt.Errorf("signing in: %w", err)
	}
	if stopped != nil {
		return stopped, nil
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("signing in: HTTP %d at %s: %.300s", resp.StatusCode, resp.Request.URL, page)
	}
	return resp.Request.URL, nil
}

// UserToken logs u in with the callers' client (x/oauth2, PKCE) and
// returns u's access token, as a downstream client of the gateway has.
func (p *Provider) UserToken(t testing.TB, u User) string {
	t.Helper()
	return p.userToken(t, u, CallerClient)
}

// UserJWT is u's access token as UserToken gets it, but a JWT, from
// JWTCallerClient.
func (p *Provider) UserJWT(t testing.TB, u User) string {
	t.Helper()
	return p.userToken(t, u, JWTCallerClient)
}

func (p *Provider) userToken(t testing.TB, u User, clientID string) string {
	t.Helper()
	redirect := "http://127.0.0.1:1/callback" // never reached: the browser stops there
	cfg := oauth2.Config{ClientID: clientID, RedirectURL: redirect, Scopes: []string{"openid"},
		Endpoint: oauth2.Endpoint{AuthURL: p.Issuer + "/auth", TokenURL: p.TokenEndpoint(), AuthStyle: oauth2.AuthStyleInParams}}
	verifier := oauth2.GenerateVerifier()
	at, err := p.Authorize(t.Context(), cfg.AuthCodeURL("state-1", oauth2.S256ChallengeOption(verifier)), u, redirect)
	if err != nil {
		t.Fatal(err)
	}
	code := at.Query().Get("code")
	if code == "" {
		t.Fatalf("no code in the redirect: %s", at.Query())
	}
	tok, err := cfg.Exchange(t.Context(), code, oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatal(err)
	}
	return tok.AccessToken
}

// Resource is a running MCP server that the provider protects. Its tool
// whoami answers with the subject of the token each call came with.
type Resource struct {
	// URL is the MCP endpoint.
	URL string

	mu      sync.Mutex
	tokens  []string // the bearer tokens of the requests that passed, in order
	refused int      // requests answered 401
}

// Scopes the resource lists in its metadata.
var Scopes = []string{"openid", "offline_access"}

// NewResource starts a protected MCP server; it stops with the test.
func NewResource(t testing.TB, p *Provider) *Resource {
	t.Helper()
	r := &Resource{}
	s := server.NewMCPServer("protected", "1.0.0")
	s.AddTool(mcp.NewTool("whoami", mcp.WithDescription("Says whose token the call came with.")),
		func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			sub, _ := ctx.Value(subjectKey{}).(string)
			return mcp.NewToolResultText(sub), nil
		})
	s.AddTool(mcp.NewTool("echo_token", mcp.WithDescription("Quotes the bearer token the call came with, as a careless server does in its errors.")),
		func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			tok, _ := ctx.Value(tokenKey{}).(string)
			return mcp.NewToolResultError("invalid grant for token " + tok), nil
		})
	mcpHandler := server.NewStreamableHTTPServer(s, server.WithHTTPContextFunc(func(ctx context.Context, req *http.Request) context.Context {
		sub, _ := req.Context().Value(subjectKey{}).(string)
		tok, _ := strings.CutPrefix(req.Header.Get("Authorization"), "Bearer ")
		return context.WithValue(context.WithValue(ctx, subjectKey{}, sub), tokenKey{}, tok)
	}))
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	t.Cleanup(func() { mcpHandler.Shutdown(context.Background()) })
	r.URL = srv.URL + "/mcp"
	metadata := srv.URL + "/.well-known/oauth-protected-resource/mcp"
	mux.HandleFunc("GET /.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"resource": r.URL, "authorization_servers": []string{p.Issuer}, "scopes_supported": Scopes})
	})
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, req *http.Request) {
		tok, ok := strings.CutPrefix(req.Header.Get("Authorization"), "Bearer ")
		sub := ""
		if ok && tok != "" {
			sub, _ = p.Subject(req.Context(), tok)
		}
		if sub == "" {
			r.mu.Lock()
			r.refused++
			r.mu.Unlock()
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+metadata+`"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		r.mu.Lock()
		r.tokens = append(r.tokens, tok)
		r.mu.Unlock()
		mcpHandler.ServeHTTP(w, req.WithContext(context.WithValue(req.Context(), subjectKey{}, sub)))
	})
	return r
}

type (
	subjectKey struct{}
	tokenKey   struct{}
)

// Refused is how many requests the resource answered 401.
func (r *Resource) Refused() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.refused
}

// Tokens are the bearer tokens of the requests the resource served.
func (r *Resource) Tokens() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.tokens...)
}
