package upstreamauth_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-router/mcp-router/internal/oauthtest"
	"github.com/mcp-router/mcp-router/proxy/upstreamauth"
)

var testKey = bytes.Repeat([]byte{7}, 32)

// rig is a provider, the MCP server it protects, and a vault over the
// in-memory state store.
type rig struct {
	p     *oauthtest.Provider
	r     *oauthtest.Resource
	store upstreamauth.Store
	vault *upstreamauth.Vault
}

func newRig(t *testing.T) *rig {
	t.Helper()
	p := oauthtest.NewProvider(t)
	store := memState(t).Credentials()
	vault, err := upstreamauth.NewVault(store, testKey, -1) // no cache: every read reaches the store
	if err != nil {
		t.Fatal(err)
	}
	return &rig{p: p, r: oauthtest.NewResource(t, p), store: store, vault: vault}
}

// login runs Login as alice, the browser following the printed URL.
func (g *rig) login(t *testing.T, cfg *upstreamauth.Config) *upstreamauth.Record {
	t.Helper()
	shown := make(chan string, 1)
	browsed := make(chan error, 1)
	go func() { // ends when the browser is done: Login waits for it
		browsed <- func() error {
			u := <-shown
			_, err := g.p.Authorize(t.Context(), u, oauthtest.Alice, "")
			return err
		}()
	}()
	rec, err := upstreamauth.Login(t.Context(), upstreamauth.LoginOptions{
		Upstream: "notes", URL: g.r.URL, Config: cfg, Vault: g.vault,
		Show: func(u string) { shown <- u },
	})
	if err != nil {
		t.Fatalf("Login: %v", err)
	}
	if err := <-browsed; err != nil {
		t.Fatalf("browser: %v", err)
	}
	return rec
}

// whoami calls the resource's whoami tool over an mcp-go client whose
// requests get their Authorization from a.
func whoami(t *testing.T, ctx context.Context, url string, a *upstreamauth.Authorizer) (string, error) {
	t.Helper()
	tr, err := transport.NewStreamableHTTP(url, transport.WithHTTPHeaderFunc(a.Header))
	if err != nil {
		t.Fatal(err)
	}
	c := client.NewClient(tr)
	defer c.Close()
	if err := c.Start(ctx); err != nil {
		return "", err
	}
	if _, err := c.Initialize(ctx, mcp.InitializeRequest{}); err != nil {
		return "", err
	}
	req := mcp.CallToolRequest{}
	req.Params.Name = "whoami"
	res, err := c.CallTool(ctx, req)
	if err != nil {
		return "", err
	}
	return res.Content[0].(mcp.TextContent).Text, nil
}

func TestLoginStoresSealedTokensThatReachTheUpstream(t *testing.T) {
	g := newRig(t)
	rec := g.login(t, &upstreamauth.Config{ClientID: oauthtest.GatewayClient})
	if rec.Token.AccessToken == "" || rec.Token.RefreshToken == "" {
		t.Fatalf("login left access token %t, refresh token %t; want both", rec.Token.AccessToken != "", rec.Token.RefreshToken != "")
	}
	if got := strings.Join(rec.Scopes, " "); got != strings.Join(oauthtest.Scopes, " ") {
		t.Errorf("scopes: got %q, want the resource's scopes_supported %q", got, oauthtest.Scopes)
	}
	sealed, err := g.store.LoadCredential(t.Context(), mustAudience(t, g.r.URL), "")
	if err != nil || sealed == nil {
		t.Fatalf("nothing stored: %v", err)
	}
	for _, secret := range []string{rec.Token.AccessToken, rec.Token.RefreshToken} {
		if bytes.Contains(sealed, []byte(secret)) {
			t.Fatal("a token is stored in the clear")
		}
	}
	a := upstreamauth.NewAuthorizer(upstreamauth.AuthorizerOptions{Upstream: "notes", URL: g.r.URL, Vault: g.vault})
	if got, err := whoami(t, t.Context(), g.r.URL, a); err != nil || got != oauthtest.Alice.ID {
		t.Fatalf("whoami with the login: got %q, %v; want %q", got, err, oauthtest.Alice.ID)
	}
	if s := g.vault.StatusOf(t.Context(), "notes", g.r.URL, ""); !s.LoggedIn || !s.Refreshable || !strings.Contains(s.Words(time.Now()), "logged in until") {
		t.Errorf("status after login: %+v (%q)", s, s.Words(time.Now()))
	}
}

func TestExpiredTokenIsRefreshed(t *testing.T) {
	g := newRig(t)
	rec := g.login(t, &upstreamauth.Config{ClientID: oauthtest.GatewayClient})
	// The access token is revoked and recorded as expired: only a refresh
	// gets the call through.
	if err := g.p.Revoke(t.Context(), rec.Token.AccessToken); err != nil {
		t.Fatal(err)
	}
	if _, err := g.p.Subject(t.Context(), rec.Token.AccessToken); err == nil {
		t.Fatal("the revoked token still works")
	}
	rec.Token.ExpiresAt = time.Now().Add(-time.Minute)
	if err := g.vault.Save(t.Context(), g.r.URL, "", rec); err != nil {
		t.Fatal(err)
	}
	a := upstreamauth.NewAuthorizer(upstreamauth.AuthorizerOptions{Upstream: "notes", URL: g.r.URL, Vault: g.vault})
	if got, err := whoami(t, t.Context(), g.r.URL, a); err != nil || got != oauthtest.Alice.ID {
		t.Fatalf("whoami after expiry: got %q, %v; want %q", got, err, oauthtest.Alice.ID)
	}
	after, err := g.vault.Load(t.Context(), g.r.URL, "")
	if err != nil {
		t.Fatal(err)
	}
	if after.Token.AccessToken == rec.Token.AccessToken || !after.Token.ExpiresAt.After(time.Now()) {
		t.Errorf("the stored token was not replaced by a fresh one (expires %s)", after.Token.ExpiresAt)
	}
	if after.ClientID != oauthtest.GatewayClient {
		t.Errorf("refresh lost the client: got %q", after.ClientID)
	}
}

func TestLogoutLeavesTheUpstreamRefusing(t *testing.T) {
	g := newRig(t)
	g.login(t, &upstreamauth.Config{ClientID: oauthtest.GatewayClient})
	if err := g.vault.Delete(t.Context(), g.r.URL, ""); err != nil {
		t.Fatal(err)
	}
	a := upstreamauth.NewAuthorizer(upstreamauth.AuthorizerOptions{Upstream: "notes", URL: g.r.URL, Vault: g.vault})
	if h := a.Header(t.Context()); h != nil {
		t.Fatalf("header after logout: got %d entries, want none", len(h))
	}
	refused := g.r.Refused()
	_, err := whoami(t, t.Context(), g.r.URL, a)
	if !errors.Is(err, transport.ErrAuthorizationRequired) {
		t.Fatalf("after logout: got %v, want ErrAuthorizationRequired", err)
	}
	if g.r.Refused() == refused {
		t.Error("the upstream refused nothing after logout")
	}
	if s := g.vault.StatusOf(t.Context(), "notes", g.r.URL, ""); s.LoggedIn || !strings.Contains(s.Words(time.Now()), "mcp-router auth login notes") {
		t.Errorf("status after logout: %q, want it to name the login command", s.Words(time.Now()))
	}
}

func TestTokenExchangePerCaller(t *testing.T) {
	g := newRig(t)
	g.login(t, &upstreamauth.Config{ClientID: oauthtest.GatewayClient}) // the gateway's own login, for callers without a token
	a := upstreamauth.NewAuthorizer(upstreamauth.AuthorizerOptions{Upstream: "notes", URL: g.r.URL, Vault: g.vault,
		Config: &upstreamauth.Config{TokenExchange: &upstreamauth.TokenExchange{
			TokenEndpoint: g.p.TokenEndpoint(), ClientID: oauthtest.ExchangeClient, ClientSecret: oauthtest.ExchangeSecret, Scope: "openid",
		}}})
	bob := g.p.UserToken(t, oauthtest.Bob)
	ctx := upstreamauth.WithCallerToken(t.Context(), bob)
	if got, err := whoami(t, ctx, g.r.URL, a); err != nil || got != oauthtest.Bob.ID {
		t.Fatalf("whoami as bob: got %q, %v; want %q", got, err, oauthtest.Bob.ID)
	}
	h1, h2 := a.Header(ctx)["Authorization"], a.Header(ctx)["Authorization"]
	if h1 != h2 || h1 == "Bearer "+bob || !strings.HasPrefix(h1, "Bearer ") {
		t.Errorf("bob's exchanged token: want one, cached, and not his own token")
	}
	if got, err := whoami(t, t.Context(), g.r.URL, a); err != nil || got != oauthtest.Alice.ID {
		t.Fatalf("whoami without a caller token: got %q, %v; want the login's %q", got, err, oauthtest.Alice.ID)
	}
	// A token the server does not know is not exchanged, and the call does
	// not fall back to the gateway's login.
	bad := upstreamauth.WithCallerToken(t.Context(), "not-a-token")
	if got := a.Header(bad)["Authorization"]; got != "" {
		t.Errorf("a refused exchange: got an Authorization header, want an empty one")
	}
	if _, err := whoami(t, bad, g.r.URL, a); !errors.Is(err, transport.ErrAuthorizationRequired) {
		t.Errorf("call with a refused exchange: got %v, want ErrAuthorizationRequired", err)
	}
}

func TestLoginWithoutAChallengeIsRefused(t *testing.T) {
	g := newRig(t)
	_, err := upstreamauth.Login(t.Context(), upstreamauth.LoginOptions{
		Upstream: "open", URL: g.p.Issuer + "/healthz", Vault: g.vault, Show: func(string) { t.Error("no URL should be shown") },
	})
	if err == nil || !strings.Contains(err.Error(), "not 401") {
		t.Fatalf("got %v, want an error saying the upstream does not ask for a login", err)
	}
}

// mustAudience is the store key of the logins to the upstream at u.
func mustAudience(t *testing.T, u string) string {
	t.Helper()
	k, err := upstreamauth.Audience(u)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestSurfaceAuthzLoginCallbackChecksHost: the loopback listener that
// waits for the authorization server's redirect answers only requests to
// the redirect URL's own host; a page that rebound another name to its
// port gets 403, and cannot feed the login a code of its own.
func TestSurfaceAuthzLoginCallbackChecksHost(t *testing.T) {
	g := newRig(t)
	shown := make(chan string, 1)
	browsed := make(chan error, 1)
	go func() {
		browsed <- func() error {
			authURL, err := url.Parse(<-shown)
			if err != nil {
				return err
			}
			redirect := authURL.Query().Get("redirect_uri")
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, redirect+"?code=forged&state=forged", nil)
			req.Host = "rebound.example:" + req.URL.Port()
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return err
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusForbidden {
				return fmt.Errorf("the redirect with a foreign Host: got %d, want 403", resp.StatusCode)
			}
			_, err = g.p.Authorize(t.Context(), authURL.String(), oauthtest.Alice, "")
			return err
		}()
	}()
	_, err := upstreamauth.Login(t.Context(), upstreamauth.LoginOptions{
		Upstream: "notes", URL: g.r.URL, Config: &upstreamauth.Config{ClientID: oauthtest.GatewayClient}, Vault: g.vault,
		Show: func(u string) { shown <- u },
	})
	if berr := <-browsed; berr != nil {
		t.Fatal(berr)
	}
	if err != nil {
		t.Fatalf("Login after a forged redirect to a foreign Host: %v, want the real one to log in", err)
	}
}

// TestLoginIgnoresARedirectOfAnotherState: a page in the user's browser
// that finds the loopback listener's port can send it a redirect of its
// own (the right Host, a code and state it made up); that is not this
// login's redirect, so it gets 400 and the login goes on to the real one.
func TestLoginIgnoresARedirectOfAnotherState(t *testing.T) {
	g := newRig(t)
	shown := make(chan string, 1)
	browsed := make(chan error, 1)
	go func() {
		browsed <- func() error {
			authURL, err := url.Parse(<-shown)
			if err != nil {
				return err
			}
			redirect := authURL.Query().Get("redirect_uri")
			for _, q := range []string{"?code=forged&state=forged", "?error=access_denied&state=forged", "?code=forged"} {
				resp, err := http.Get(redirect + q)
				if err != nil {
					return err
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusBadRequest {
					return fmt.Errorf("a redirect %s of another state: got %d, want 400", q, resp.StatusCode)
				}
			}
			_, err = g.p.Authorize(t.Context(), authURL.String(), oauthtest.Alice, "")
			return err
		}()
	}()
	_, err := upstreamauth.Login(t.Context(), upstreamauth.LoginOptions{
		Upstream: "notes", URL: g.r.URL, Config: &upstreamauth.Config{ClientID: oauthtest.GatewayClient}, Vault: g.vault,
		Show: func(u string) { shown <- u },
	})
	if berr := <-browsed; berr != nil {
		t.Fatal(berr)
	}
	if err != nil {
		t.Fatalf("Login after forged redirects: %v, want the real one to log in", err)
	}
}
