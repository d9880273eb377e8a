package proxy

// The front door's checks, for a browser interface served beside the MCP
// endpoint: a browser cannot send a bearer token when it navigates, so
// such an interface checks the token once (at its login) and the Host and
// Origin on every request.

import (
	"strings"
)

// FrontDoor is Guard's Host, Origin and token checks, for a handler that
// authenticates its requests itself.
type FrontDoor struct{ g *guard }

// NewFrontDoor returns the checks of a Guard with opts.
func NewFrontDoor(opts GuardOptions) *FrontDoor {
	return &FrontDoor{Guard(nil, opts).(*guard)}
}

// HostAllowed reports whether the Host header value (with or without a
// port) is a loopback name or IP, or one of the allowed hosts.
func (f *FrontDoor) HostAllowed(host string) bool { return f.g.hostAllowed(host) }

// OriginAllowed reports whether origin is an http(s) loopback origin or
// one of the allowed origins.
func (f *FrontDoor) OriginAllowed(origin string) bool { return f.g.originAllowed(origin) }

// TokensRequired reports whether bearer tokens are configured.
func (f *FrontDoor) TokensRequired() bool { return len(f.g.tokens) > 0 }

// TokenValid reports, in constant time, whether token is one of the
// configured bearer tokens.
func (f *FrontDoor) TokenValid(token string) bool {
	return f.g.principalOfToken(strings.TrimSpace(token)) != noPrincipal
}
