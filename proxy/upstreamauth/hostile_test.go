package upstreamauth_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"

	"github.com/mcp-router/mcp-router/proxy/upstreamauth"
	"github.com/mcp-router/mcp-router/state"
)

// hostile is an upstream and its authorization server in one, whose
// reply at one path misbehaves: "endless" never ends (it streams until
// the reader hangs up), "slow" sends a byte now and then and never ends,
// "huge" is well-formed JSON of 4 MiB.
type hostile struct {
	srv  *httptest.Server
	sent atomic.Int64 // bytes of misbehaving replies written
	hits atomic.Int32 // requests to the misbehaving path
}

const hugeBytes = 4 << 20

func newHostile(t *testing.T, path, how string) *hostile {
	t.Helper()
	h := &hostile{}
	mux := http.NewServeMux()
	h.srv = httptest.NewServer(mux)
	base := h.srv.URL
	normal := map[string]any{
		"/.well-known/oauth-protected-resource/mcp": map[string]any{"resource": base + "/mcp", "authorization_servers": []string{base}},
		"/.well-known/oauth-authorization-server": map[string]any{"issuer": base, "authorization_endpoint": base + "/authorize",
			"token_endpoint": base + "/token", "registration_endpoint": base + "/register", "code_challenge_methods_supported": []string{"S256"},
			"response_types_supported": []string{"code"}},
		"/register": map[string]any{"client_id": "c1", "token_endpoint_auth_method": "none"},
		"/token":    map[string]any{"access_token": "at-0123456789", "token_type": "Bearer", "refresh_token": "rt-0123456789", "expires_in": 3600},
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == path:
			h.misbehave(w, r, how)
		case r.URL.Path == "/mcp":
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+base+`/.well-known/oauth-protected-resource/mcp"`)
			http.Error(w, "log in", http.StatusUnauthorized)
		case r.URL.Path == "/authorize":
			q := r.URL.Query()
			http.Redirect(w, r, q.Get("redirect_uri")+"?code=c0de&state="+url.QueryEscape(q.Get("state")), http.StatusFound)
		case normal[r.URL.Path] != nil:
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(normal[r.URL.Path])
		default:
			http.NotFound(w, r)
		}
	})
	t.Cleanup(h.srv.Close)
	return h
}

func (h *hostile) misbehave(w http.ResponseWriter, r *http.Request, how string) {
	h.hits.Add(1)
	w.Header().Set("Content-Type", "application/json")
	if how == "huge" {
		n, _ := w.Write([]byte(`{"access_token":"` + strings.Repeat("a", hugeBytes) + `","client_id":"` + strings.Repeat("b", hugeBytes) +
			`","token_type":"Bearer","expires_in":3600}`))
		h.sent.Add(int64(n))
		return
	}
	n, _ := w.Write([]byte(`{"access_token":"`))
	h.sent.Add(int64(n))
	if how == "slow" { // a byte now and then, never the end
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-r.Context().Done():
				return
			case <-tick.C:
				if _, err := w.Write([]byte("a")); err != nil {
					return
				}
				w.(http.Flusher).Flush()
			}
		}
	}
	chunk := []byte(strings.Repeat("a", 32<<10))
	for r.Context().Err() == nil {
		n, err := w.Write(chunk)
		h.sent.Add(int64(n))
		if err != nil {
			return
		}
		w.(http.Flusher).Flush()
	}
}

// done stops the server (waiting for its handlers) and returns the bytes
// the misbehaving replies sent.
func (h *hostile) done() int64 {
	h.srv.Close()
	return h.sent.Load()
}

// maxSent is the most a bounded reader may have let the hostile server
// write: the reply bound and what socket buffers take before the server
// sees the reader hang up.
const maxSent = 24 << 20

// loginAt runs Login against h, a "browser" following the authorization
// URL and its redirect.
func loginAt(t *testing.T, h *hostile) error {
	t.Helper()
	vault := newVault(t)
	// A bound so that an unbounded read fails the test rather than hang
	// it (a login that never sees its redirect waits for its context).
	ctx, cancel := context.WithTimeout(t.Context(), 45*time.Second)
	defer cancel()
	browsed := make(chan struct{})
	shown := make(chan string, 1)
	go func() { // ends with the redirect, or when Login returns (cancel)
		defer close(browsed)
		select {
		case u := <-shown:
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
			if resp, err := http.DefaultClient.Do(req); err == nil {
				resp.Body.Close()
			}
		case <-ctx.Done():
		}
	}()
	_, err := upstreamauth.Login(ctx, upstreamauth.LoginOptions{Upstream: "evil", URL: h.srv.URL + "/mcp", Vault: vault,
		Show: func(u string) { shown <- u }})
	cancel()
	<-browsed
	return err
}

// TestBoundRemotePeerLogin: an authorization server (or the upstream's
// protected resource metadata) whose reply never ends, or is huge, fails
// the login with an error saying so; the gateway reads at most its bound.
func TestBoundRemotePeerLogin(t *testing.T) {
	for _, tt := range []struct{ name, path, how string }{
		{"resource metadata, endless", "/.well-known/oauth-protected-resource/mcp", "endless"},
		{"registration, endless", "/register", "endless"},
		{"registration, huge", "/register", "huge"},
		{"token, endless", "/token", "endless"},
		{"token, huge", "/token", "huge"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := newHostile(t, tt.path, tt.how)
			err := loginAt(t, h)
			if err == nil {
				t.Fatal("login succeeded, want an error")
			}
			if sent := h.done(); tt.how == "endless" && sent > maxSent {
				t.Errorf("the gateway read on: %d bytes sent before it hung up, want at most %d", sent, maxSent)
			}
			if tt.how != "" && !strings.Contains(err.Error(), "too large") {
				t.Errorf("login: got %v, want it refused for the reply's size", err)
			}
		})
	}
}

// TestBoundRemotePeerRefresh: a refresh answered with an endless or huge
// reply leaves the call without a header (the upstream answers 401:
// auth_required) and the stored login as it was.
func TestBoundRemotePeerRefresh(t *testing.T) {
	for _, how := range []string{"endless", "huge"} {
		t.Run(how, func(t *testing.T) {
			h := newHostile(t, "/token", how)
			vault := newVault(t)
			resource := h.srv.URL + "/mcp"
			rec := &upstreamauth.Record{ClientID: "c1", AuthMethod: "none", Issuer: h.srv.URL, TokenEndpoint: h.srv.URL + "/token",
				Token: transport.Token{AccessToken: "old", RefreshToken: "rt-0123456789", TokenType: "Bearer", ExpiresAt: time.Now().Add(-time.Minute)}}
			if err := vault.Save(t.Context(), resource, "", rec); err != nil {
				t.Fatal(err)
			}
			a := upstreamauth.NewAuthorizer(upstreamauth.AuthorizerOptions{Upstream: "evil", URL: resource, Vault: vault})
			if got := a.Header(t.Context()); got != nil {
				t.Errorf("header after a hostile refresh: got %d bytes, want none", len(got["Authorization"]))
			}
			if sent := h.done(); how == "endless" && sent > maxSent {
				t.Errorf("the gateway read on: %d bytes sent, want at most %d", sent, maxSent)
			}
			if h.hits.Load() == 0 {
				t.Error("no refresh reached the token endpoint")
			}
			after, err := vault.Load(t.Context(), resource, "")
			if err != nil || after.Token.AccessToken != "old" {
				t.Errorf("stored login after a hostile refresh: %v, want it unchanged", err)
			}
		})
	}
}

// TestBoundRemotePeerSlowRefresh: a refresh whose reply trickles and
// never ends fails at the client's timeout; the call gets no header.
func TestBoundRemotePeerSlowRefresh(t *testing.T) {
	h := newHostile(t, "/token", "slow")
	vault := newVault(t)
	resource := h.srv.URL + "/mcp"
	rec := &upstreamauth.Record{ClientID: "c1", AuthMethod: "none", Issuer: h.srv.URL, TokenEndpoint: h.srv.URL + "/token",
		Token: transport.Token{AccessToken: "old", RefreshToken: "rt-0123456789", TokenType: "Bearer", ExpiresAt: time.Now().Add(-time.Minute)}}
	if err := vault.Save(t.Context(), resource, "", rec); err != nil {
		t.Fatal(err)
	}
	a := upstreamauth.NewAuthorizer(upstreamauth.AuthorizerOptions{Upstream: "evil", URL: resource, Vault: vault,
		HTTPClient: &http.Client{Timeout: 300 * time.Millisecond}})
	if got := a.Header(t.Context()); got != nil {
		t.Errorf("header after a refresh that never ends: got one, want none")
	}
	h.done()
	if h.hits.Load() == 0 {
		t.Error("no refresh reached the token endpoint")
	}
}

// TestBoundRemotePeerTokenExchange: a token exchange answered with an
// endless or huge reply refuses the call (an empty Authorization).
func TestBoundRemotePeerTokenExchange(t *testing.T) {
	for _, how := range []string{"endless", "huge"} {
		t.Run(how, func(t *testing.T) {
			h := newHostile(t, "/token", how)
			a := upstreamauth.NewAuthorizer(upstreamauth.AuthorizerOptions{Upstream: "evil", URL: h.srv.URL + "/mcp",
				Config: &upstreamauth.Config{TokenExchange: &upstreamauth.TokenExchange{TokenEndpoint: h.srv.URL + "/token"}}})
			ctx := upstreamauth.WithCallerToken(t.Context(), "caller-0123456789")
			if got, ok := a.Header(ctx)["Authorization"]; !ok || got != "" {
				t.Errorf("header after a hostile exchange: got %d bytes, want an empty one", len(got))
			}
			if sent := h.done(); how == "endless" && sent > maxSent {
				t.Errorf("the gateway read on: %d bytes sent, want at most %d", sent, maxSent)
			}
		})
	}
}

func newVault(t *testing.T) *upstreamauth.Vault {
	t.Helper()
	vault, err := upstreamauth.NewVault(memState(t).Credentials(), testKey, -1)
	if err != nil {
		t.Fatal(err)
	}
	return vault
}

// memState is state in memory, closed when t ends.
func memState(t testing.TB) *state.DB {
	t.Helper()
	db, err := state.OpenMemory(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}
