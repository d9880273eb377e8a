package upstreamauth

import (
	"context"
	"strings"
)

// Config is an upstream's `auth` settings; the zero value logs in with
// whatever the authorization server offers.
type Config struct {
	// ClientID and ClientSecret are a client registered beforehand (no
	// registration is made); an empty secret is a public client.
	ClientID     string
	ClientSecret string
	// AuthMethod is how the client authenticates at the token endpoint
	// (client_secret_basic, client_secret_post, none); empty: the server's
	// metadata decides.
	AuthMethod string
	// ClientMetadataURL is the https URL of a client ID metadata document
	// describing this gateway, used where the server supports them.
	ClientMetadataURL string
	// Scopes to ask for; empty means the challenge's scope, else the
	// protected resource's scopes_supported, else none.
	Scopes []string
	// RedirectURL is the loopback address the login listens on; empty
	// means http://127.0.0.1 on a free port.
	RedirectURL string
	// PerUser gives each caller (principal) its own login (`auth login
	// NAME --for PRINCIPAL`); a caller without one is refused. Calls with
	// no principal use the gateway's login.
	PerUser bool
	// TokenExchange, when set, exchanges each caller's bearer token for a
	// token to this upstream (RFC 8693).
	TokenExchange *TokenExchange
}

// TokenExchange configures RFC 8693 token exchange.
type TokenExchange struct {
	// TokenEndpoint is where the exchange is made (required).
	TokenEndpoint string
	// ClientID and ClientSecret authenticate the gateway there (HTTP
	// Basic); both may be empty.
	ClientID     string
	ClientSecret string
	// Audience and Scope describe the token wanted; Resource is sent as the
	// RFC 8707 resource when set.
	Audience string
	Scope    string
	Resource string
	// SubjectTokenType is the type of the caller's token; empty means
	// urn:ietf:params:oauth:token-type:access_token.
	SubjectTokenType string
}

type callerTokenKey struct{}

// WithCallerToken marks ctx with the bearer token the downstream caller
// presented, for token exchange.
func WithCallerToken(ctx context.Context, token string) context.Context {
	if token == "" {
		return ctx
	}
	return context.WithValue(ctx, callerTokenKey{}, token)
}

// WithCallerAuthorization marks ctx with the bearer token of an
// Authorization header value, if it is one.
func WithCallerAuthorization(ctx context.Context, header string) context.Context {
	scheme, token, ok := strings.Cut(strings.TrimSpace(header), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return ctx
	}
	return WithCallerToken(ctx, strings.TrimSpace(token))
}

func callerToken(ctx context.Context) string {
	t, _ := ctx.Value(callerTokenKey{}).(string)
	return t
}

// LoginCommand is the command that logs the gateway in to upstream, or,
// with a principal, that caller.
func LoginCommand(upstream, principal string) string {
	if principal != "" {
		return "mcp-router auth login " + upstream + " --for " + principal
	}
	return "mcp-router auth login " + upstream
}
