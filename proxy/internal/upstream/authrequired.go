package upstream

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/mark3labs/mcp-go/client/transport"

	"github.com/mcp-router/mcp-router/proxy/upstreamauth"
)

// NeedsLogin reports whether err is an upstream's 401.
func NeedsLogin(err error) bool {
	return errors.Is(err, ErrUnauthorized) || errors.Is(err, transport.ErrAuthorizationRequired) ||
		errors.Is(err, transport.ErrOAuthAuthorizationRequired) || errors.Is(err, transport.ErrUnauthorized)
}

// loginHint says how to log in to the upstream named name.
func loginHint(name string) string {
	return "run `" + upstreamauth.LoginCommand(name, "") + "` to log in, or put a token in its headers"
}

// AuthRequired is err, a 401 of the upstream cfg to a call of principal
// ("" for a call with none), with the command that logs in: the caller's
// own login with auth.per_user.
func AuthRequired(principal string, cfg Config, err error) error {
	if cfg.Auth != nil && cfg.Auth.PerUser && principal != "" {
		return fmt.Errorf("%w; this upstream takes a login per caller: run `%s`", err, upstreamauth.LoginCommand(cfg.Name, principal))
	}
	return fmt.Errorf("%w; %s", err, loginHint(cfg.Name))
}

// withAuthorizer gives an HTTP upstream with an Authorizer, and no
// Authorization header of its own, its login's token on each request.
func withAuthorizer(cfg Config) (transport.HTTPHeaderFunc, bool) {
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
