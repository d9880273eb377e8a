package proxy

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-router/mcp-router/internal/oauthtest"
	"github.com/mcp-router/mcp-router/proxy/call"
	"github.com/mcp-router/mcp-router/proxy/frontdoor"
	"github.com/mcp-router/mcp-router/proxy/internal/upstream"
	"github.com/mcp-router/mcp-router/proxy/upstreamauth"
)

// A remote upstream behind an OpenID provider: calls carry the stored
// login's token, or one exchanged for the caller's; without a login a
// call fails with auth_required, naming the command that logs in.
func TestRemoteUpstreamTokensPerCaller(t *testing.T) {
	p := oauthtest.NewProvider(t)
	r := oauthtest.NewResource(t, p)
	vault, err := upstreamauth.NewVault(memState(t).Credentials(), bytes.Repeat([]byte{3}, 32), -1)
	if err != nil {
		t.Fatal(err)
	}
	login := &upstreamauth.Record{ClientID: oauthtest.CallerClient, Token: transport.Token{AccessToken: p.UserToken(t, oauthtest.Alice), TokenType: "bearer"}}
	if err := vault.Save(t.Context(), r.URL, "", login); err != nil {
		t.Fatal(err)
	}
	auth := &upstreamauth.Config{TokenExchange: &upstreamauth.TokenExchange{
		TokenEndpoint: p.TokenEndpoint(), ClientID: oauthtest.ExchangeClient, ClientSecret: oauthtest.ExchangeSecret, Scope: "openid"}}
	h := startHub(t, UpstreamConfig{Name: "notes", Transport: TransportStreamableHTTP, URL: r.URL, Prefix: "notes_", Auth: auth,
		Authorizer: upstreamauth.NewAuthorizer(upstreamauth.AuthorizerOptions{Upstream: "notes", URL: r.URL, Config: auth, Vault: vault})})

	callAs := func(t *testing.T, callerToken string) (string, error) {
		t.Helper()
		ctx := upstreamauth.WithCallerToken(t.Context(), callerToken)
		res, err := h.CallTool(ctx, "notes_whoami", map[string]any{}, nil)
		if err != nil {
			return "", err
		}
		return res.Content[0].(mcp.TextContent).Text, nil
	}
	if got, err := callAs(t, ""); err != nil || got != oauthtest.Alice.ID {
		t.Fatalf("call with the login: got %q, %v; want %q", got, err, oauthtest.Alice.ID)
	}
	if got, err := callAs(t, p.UserToken(t, oauthtest.Bob)); err != nil || got != oauthtest.Bob.ID {
		t.Fatalf("call as bob: got %q, %v; want %q (his exchanged token)", got, err, oauthtest.Bob.ID)
	}

	// An upstream that quotes the token it got has it redacted.
	res, err := h.CallTool(t.Context(), "notes_echo_token", map[string]any{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if text := res.Content[0].(mcp.TextContent).Text; strings.Contains(text, login.Token.AccessToken) || !strings.Contains(text, upstreamauth.RedactedToken) {
		t.Errorf("a result quoting the token: got %q, want the token redacted", text)
	}

	if err := vault.Delete(t.Context(), r.URL, ""); err != nil {
		t.Fatal(err)
	}
	_, err = callAs(t, "")
	var ue *UpstreamError
	if !errors.As(err, &ue) || ue.Kind != call.KindAuthRequired || !strings.Contains(err.Error(), "mcp-router auth login notes") {
		t.Fatalf("call after logout: got %v, want auth_required naming `mcp-router auth login notes`", err)
	}
	for _, tok := range []string{login.Token.AccessToken} {
		if strings.Contains(err.Error(), tok) {
			t.Fatal("the error holds a token")
		}
	}
}

// With auth.per_user each caller (principal) uses its own login; a caller
// without one is refused, told to log in for itself, never served with
// the gateway's login.
func TestRemoteUpstreamLoginPerCaller(t *testing.T) {
	p := oauthtest.NewProvider(t)
	r := oauthtest.NewResource(t, p)
	vault, err := upstreamauth.NewVault(memState(t).Credentials(), bytes.Repeat([]byte{4}, 32), -1)
	if err != nil {
		t.Fatal(err)
	}
	for subject, u := range map[string]oauthtest.User{"": oauthtest.Alice, "token-b0b000000000": oauthtest.Bob} {
		rec := &upstreamauth.Record{ClientID: oauthtest.CallerClient, Token: transport.Token{AccessToken: p.UserToken(t, u), TokenType: "Bearer"}}
		if err := vault.Save(t.Context(), r.URL, subject, rec); err != nil {
			t.Fatal(err)
		}
	}
	auth := &upstreamauth.Config{PerUser: true}
	h := startHub(t, UpstreamConfig{Name: "notes", Transport: TransportStreamableHTTP, URL: r.URL, Prefix: "notes_", Auth: auth,
		Authorizer: upstreamauth.NewAuthorizer(upstreamauth.AuthorizerOptions{Upstream: "notes", URL: r.URL, Config: auth, Vault: vault, Principal: PrincipalOf})})
	callAs := func(principal string) (string, error) {
		ctx := t.Context()
		if principal != "" {
			ctx = frontdoor.WithPrincipal(ctx, principal)
		}
		res, err := h.CallTool(ctx, "notes_whoami", map[string]any{}, nil)
		if err != nil {
			return "", err
		}
		return res.Content[0].(mcp.TextContent).Text, nil
	}
	if got, err := callAs(""); err != nil || got != oauthtest.Alice.ID {
		t.Errorf("call without a principal: got %q, %v; want the gateway's login (%s)", got, err, oauthtest.Alice.ID)
	}
	if got, err := callAs("token-b0b000000000"); err != nil || got != oauthtest.Bob.ID {
		t.Errorf("call of bob's principal: got %q, %v; want %s", got, err, oauthtest.Bob.ID)
	}
	_, err = callAs("token-ca401000000")
	var ue *UpstreamError
	if !errors.As(err, &ue) || ue.Kind != call.KindAuthRequired || !strings.Contains(err.Error(), "mcp-router auth login notes --for token-ca401000000") {
		t.Errorf("call of a principal without a login: got %v, want auth_required naming its own login command", err)
	}
	// Refusals of one caller's credentials are not faults of the shared
	// connection: many of them leave it up for the others.
	for range 2 * upstream.MaxViolations {
		if _, err := callAs("token-ca401000000"); err == nil {
			t.Fatal("a caller without a login got through")
		}
	}
	if got, err := callAs("token-b0b000000000"); err != nil || got != oauthtest.Bob.ID {
		t.Errorf("bob after another caller's refusals: got %q, %v", got, err)
	}
	if st := h.Status()[0]; st.Restarts != 0 || st.State != StateConnected {
		t.Errorf("after refusals the upstream is %s with %d restarts, want connected with none", st.State, st.Restarts)
	}
}
