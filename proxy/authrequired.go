package proxy

// Upstreams that need a login: an HTTP upstream that answers 401 fails
// the call with KindAuthRequired, naming the command that logs in.

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/mark3labs/mcp-go/client/transport"

	"github.com/mcp-router/mcp-router/proxy/upstreamauth"
)

// KindAuthRequired is a call to an upstream that asks for authorization
// (HTTP 401): it needs `mcp-router auth login NAME`, or a token in its
// headers.
const KindAuthRequired Kind = "auth_required"

// needsLogin reports whether err is an upstream's 401.
func needsLogin(err error) bool {
	return errors.Is(err, ErrUnauthorized) || errors.Is(err, transport.ErrAuthorizationRequired) ||
		errors.Is(err, transport.ErrOAuthAuthorizationRequired) || errors.Is(err, transport.ErrUnauthorized)
}

// loginHint says how to log in to the upstream named name.
func loginHint(name string) string {
	return "run `" + upstreamauth.LoginCommand(name, "") + "` to log in, or put a token in its headers"
}

// authRequired is err, a 401 of the upstream cfg to a call of ctx, with
// the command that logs in: the caller's own login with auth.per_user.
func authRequired(ctx context.Context, cfg UpstreamConfig, err error) error {
	if p := PrincipalOf(ctx); cfg.Auth != nil && cfg.Auth.PerUser && p != "" {
		return fmt.Errorf("%w; this upstream takes a login per caller: run `%s`", err, upstreamauth.LoginCommand(cfg.Name, p))
	}
	return fmt.Errorf("%w; %s", err, loginHint(cfg.Name))
}

// PrincipalOf is who the call in ctx came from, as audit records and
// quotas name it (the fingerprint of its bearer token), or "" for a call
// with none (stdio, or HTTP without tokens).
func PrincipalOf(ctx context.Context) string {
	if p := principalName(ctx); p != LocalPrincipal {
		return p
	}
	return ""
}

// withAuthorizer gives an HTTP upstream with an Authorizer, and no
// Authorization header of its own, its login's token on each request.
func withAuthorizer(cfg UpstreamConfig) (transport.HTTPHeaderFunc, bool) {
	if cfg.Authorizer == nil {
		return nil, false
	}
	for k := range cfg.Headers {
		if http.CanonicalHeaderKey(k) == "Authorization" {
			return nil, false
		}
	}
	return cfg.Authorizer.Header, true
}
