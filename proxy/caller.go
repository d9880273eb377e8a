package proxy

import (
	"context"

	"github.com/mark3labs/mcp-go/server"
	"github.com/mcp-router/mcp-router/proxy/frontdoor"
)

// LocalPrincipal is the principal of calls that carry no bearer token:
// over stdio, and over HTTP when no tokens are configured.
const LocalPrincipal = frontdoor.LocalPrincipal

// sessionID is the client session of ctx; over stdio there is one.
func sessionID(ctx context.Context) string {
	if cs := server.ClientSessionFromContext(ctx); cs != nil {
		return cs.SessionID()
	}
	return ""
}

// principalName is who ctx's caller is: the principal the front door
// found (its bearer token's fingerprint), or LocalPrincipal.
func principalName(ctx context.Context) string {
	if p := frontdoor.PrincipalOf(ctx); p != "" {
		return p
	}
	return LocalPrincipal
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
