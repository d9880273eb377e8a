package upstreamauth_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/client/transport"

	"github.com/mcp-router/mcp-router/proxy/upstreamauth"
)

// A 403 asking for more scope is recorded in the login, for the next
// login to ask for, and reaches the MCP client as a 401.
func TestInsufficientScopeIsRecordedForTheNextLogin(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/step-up":
			w.Header().Set("WWW-Authenticate", `Bearer error="insufficient_scope", scope="files:read files:write", resource_metadata="x"`)
			http.Error(w, "insufficient scope", http.StatusForbidden)
		case "/forbidden":
			http.Error(w, "no", http.StatusForbidden)
		}
	}))
	t.Cleanup(srv.Close)
	vault, err := upstreamauth.NewVault(memState(t).Credentials(), testKey, -1)
	if err != nil {
		t.Fatal(err)
	}
	rec := &upstreamauth.Record{ClientID: "c", Scopes: []string{"files:read"}, Token: transport.Token{AccessToken: "t"}}
	if err := vault.Save(t.Context(), srv.URL, "", rec); err != nil {
		t.Fatal(err)
	}
	a := upstreamauth.NewAuthorizer(upstreamauth.AuthorizerOptions{Upstream: "files", URL: srv.URL, Vault: vault})
	c := &http.Client{Transport: a.Observe(http.DefaultTransport)}
	get := func(path string) int {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+path, nil)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := get("/forbidden"); got != http.StatusForbidden {
		t.Errorf("a plain 403: got %d, want it passed on", got)
	}
	if got := get("/step-up"); got != http.StatusUnauthorized {
		t.Errorf("403 insufficient_scope: got %d, want 401", got)
	}
	after, err := vault.Load(t.Context(), srv.URL, "")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"files:read", "files:write"}, after.ScopesNeeded); diff != "" {
		t.Errorf("scopes needed (-want +got):\n%s", diff)
	}
	if after.Token.AccessToken != "t" {
		t.Error("recording the scopes lost the token")
	}
}
