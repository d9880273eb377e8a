package proxy

import (
	"context"

	"github.com/mcp-router/mcp-router/proxy/frontdoor"
)

// LocalPrincipal is the principal of calls that carry no bearer token:
// over stdio, and over HTTP when no tokens are configured.
const LocalPrincipal = "local"

// principalName is who ctx's caller is: the principal the front door
// found (its bearer token's fingerprint), or LocalPrincipal.
func principalName(ctx context.Context) string {
	if p := frontdoor.PrincipalOf(ctx); p != "" {
		return p
	}
	return LocalPrincipal
}
