package proxy

import (
	"cmp"
	"context"

	"github.com/mark3labs/mcp-go/server"

	"github.com/mcp-router/mcp-router/executor"
	"github.com/mcp-router/mcp-router/proxy/call"
	"github.com/mcp-router/mcp-router/proxy/frontdoor"
)

// LocalPrincipal is the principal of calls that carry no bearer token:
// over stdio, and over HTTP when no tokens are configured.
const LocalPrincipal = frontdoor.LocalPrincipal

// newCall is the edge: it reads what mcp-go (or the executor, for a plan
// step) put in ctx once, into the Call of a tools/call of tool. Below it,
// nothing reads the caller from ctx.
func newCall(ctx context.Context, tool string, args any) *call.Call {
	c := &call.Call{Principal: PrincipalOf(ctx), Session: sessionID(ctx), Tool: tool, Args: args}
	if stateless(ctx) {
		c.Era = call.Stateless
	}
	c.Deadline, _ = ctx.Deadline()
	c.Plan, c.Step, _ = executor.StepOf(ctx)
	return c
}

// sessionTagOf is the SessionTag of ctx's session.
func sessionTagOf(ctx context.Context) string { return call.SessionTag(sessionID(ctx)) }

// sessionID is the client session of ctx; over stdio there is one.
func sessionID(ctx context.Context) string {
	if cs := server.ClientSessionFromContext(ctx); cs != nil {
		return cs.SessionID()
	}
	return ""
}

// principalName is who ctx's caller is: the principal the front door
// found (its bearer token's fingerprint), or LocalPrincipal.
func principalName(ctx context.Context) string { return cmp.Or(PrincipalOf(ctx), LocalPrincipal) }

// PrincipalOf is who the call in ctx came from, as audit records and
// quotas name it (the fingerprint of its bearer token), or "" for a call
// with none (stdio, or HTTP without tokens).
func PrincipalOf(ctx context.Context) string {
	if p := frontdoor.PrincipalOf(ctx); p != LocalPrincipal {
		return p
	}
	return ""
}
