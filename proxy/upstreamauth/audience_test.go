package upstreamauth_test

import (
	"cmp"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"

	"github.com/mcp-router/mcp-router/internal/oauthtest"
	"github.com/mcp-router/mcp-router/proxy/upstreamauth"
)

// TestCredentialAudienceRepointedUpstream: a login is the upstream
// server's, not its local name's. The same name pointed at another server
// sends no token there; another name for the same server sends it.
func TestCredentialAudienceRepointedUpstream(t *testing.T) {
	g := newRig(t)
	g.login(t, &upstreamauth.Config{ClientID: oauthtest.GatewayClient})
	other := httptest.NewServer(nil)
	t.Cleanup(other.Close)
	repointed := upstreamauth.NewAuthorizer(upstreamauth.AuthorizerOptions{Upstream: "notes", URL: other.URL + "/mcp", Vault: g.vault})
	if h := repointed.Header(t.Context()); h != nil {
		t.Errorf("notes pointed at another server: got an Authorization header, want none")
	}
	renamed := upstreamauth.NewAuthorizer(upstreamauth.AuthorizerOptions{Upstream: "notes2", URL: g.r.URL + "/", Vault: g.vault})
	if got, err := whoami(t, t.Context(), g.r.URL, renamed); err != nil || got != oauthtest.Alice.ID {
		t.Errorf("the same server under another name: got %q, %v; want the login's %q", got, err, oauthtest.Alice.ID)
	}
}

// TestCredentialAudienceRefreshStaysAtItsIssuer: when the upstream's
// metadata names another authorization server than the login was made
// at, the refresh token is not sent there and the call gets no header.
func TestCredentialAudienceRefreshStaysAtItsIssuer(t *testing.T) {
	h := newHostile(t, "/token", "huge") // counts the token requests it gets
	vault := newVault(t)
	resource := h.srv.URL + "/mcp"
	rec := &upstreamauth.Record{ClientID: "c1", ClientSecret: "client-secret-1", Issuer: "https://login.example.test",
		TokenEndpoint: "https://login.example.test/token",
		Token:         transport.Token{AccessToken: "old", RefreshToken: "rt-0123456789", TokenType: "Bearer", ExpiresAt: time.Now().Add(-time.Minute)}}
	if err := vault.Save(t.Context(), resource, "", rec); err != nil {
		t.Fatal(err)
	}
	a := upstreamauth.NewAuthorizer(upstreamauth.AuthorizerOptions{Upstream: "notes", URL: resource, Vault: vault})
	if got := a.Header(t.Context()); got != nil {
		t.Errorf("header: got one, want none (the login's issuer is not the upstream's now)")
	}
	h.done()
	if n := h.hits.Load(); n != 0 {
		t.Errorf("the other authorization server got %d token requests, want none", n)
	}
}

// TestCredentialAudienceCallerWithoutExchangeableToken: with token
// exchange, a caller known to the gateway whose token is not sent on (a
// static gateway token) is refused, never served with the gateway's login.
func TestCredentialAudienceCallerWithoutExchangeableToken(t *testing.T) {
	g := newRig(t)
	g.login(t, &upstreamauth.Config{ClientID: oauthtest.GatewayClient})
	a := upstreamauth.NewAuthorizer(upstreamauth.AuthorizerOptions{Upstream: "notes", URL: g.r.URL, Vault: g.vault, Principal: principalOf,
		Config: &upstreamauth.Config{TokenExchange: &upstreamauth.TokenExchange{TokenEndpoint: g.p.TokenEndpoint()}}})
	if got, ok := a.Header(withPrincipal(t.Context(), "token-0123456789ab"))["Authorization"]; !ok || got != "" {
		t.Errorf("a static-token caller: got a header of %d bytes, want an empty one", len(got))
	}
	if got := a.Header(t.Context())["Authorization"]; got == "" {
		t.Error("no caller (the gateway's own listing): got no header, want the gateway's login")
	}
}

type principalKey struct{}

func withPrincipal(ctx context.Context, p string) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

func principalOf(ctx context.Context) string {
	p, _ := ctx.Value(principalKey{}).(string)
	return p
}

// steering is an upstream whose 401 names the protected resource metadata
// at elsewhere (its own URL, or the same server as "localhost", another
// origin), which says the upstream is resource and that the
// authorization server is one that hands a token to whoever completes its
// flow. It counts the fetches of that metadata.
func steering(t *testing.T, elsewhere bool, resource string) (upstreamURL string, fetched *atomic.Int32) {
	t.Helper()
	fetched = &atomic.Int32{}
	as := newHostile(t, "/unused", "huge").srv.URL
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	metadata := srv.URL + "/.well-known/oauth-protected-resource/mcp"
	if elsewhere {
		metadata = strings.Replace(srv.URL, "127.0.0.1", "localhost", 1) + "/.well-known/oauth-protected-resource/mcp"
	}
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+metadata+`"`)
		http.Error(w, "log in", http.StatusUnauthorized)
	})
	mux.HandleFunc("/.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, r *http.Request) {
		fetched.Add(1)
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"resource": cmp.Or(resource, srv.URL+"/mcp"), "authorization_servers": []string{as}})
	})
	return srv.URL + "/mcp", fetched
}

// TestCredentialAudienceLoginMetadataBinding: auth login reads protected
// resource metadata only at the upstream's own origin, and uses it only
// when its resource (RFC 9728) is the upstream's URL, so that a 401
// cannot steer the login, and the token, to another resource.
func TestCredentialAudienceLoginMetadataBinding(t *testing.T) {
	for _, tt := range []struct {
		name      string
		elsewhere bool
		resource  string
		want      string
	}{
		{"metadata at another origin", true, "", "origin"},
		{"metadata naming another resource", false, "https://victim.example.test/mcp", "resource"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			upstreamURL, fetched := steering(t, tt.elsewhere, tt.resource)
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second) // a login shown the URL waits for its redirect
			defer cancel()
			shown := false
			_, err := upstreamauth.Login(ctx, upstreamauth.LoginOptions{Upstream: "evil", URL: upstreamURL, Vault: newVault(t),
				Show: func(string) { shown = true }})
			if err == nil || shown || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Login: %v (authorization URL shown: %v); want refused naming the %s", err, shown, tt.want)
			}
			if tt.elsewhere && fetched.Load() != 0 {
				t.Errorf("metadata at another origin fetched %d times, want never", fetched.Load())
			}
		})
	}
}
