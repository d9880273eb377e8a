// Package frontdoor holds the checks every HTTP request passes before it
// reaches the MCP server that mcp-router serves over streamable HTTP.
//
// Data flows one way: a request comes in through Guard, which checks its
// Host and Origin, its bearer token, the size and pace of its body and
// its session's bounds, marks its context with the caller's principal
// and profile (PrincipalOf, ProfileOf), and hands it to the next handler:
// the MCP server, or ByProfile choosing the server of the caller's
// profile. The package knows nothing of the MCP server behind it.
//
//   - guard.go: Guard and its Options, CheckListen, SessionIdleTTL
//   - sessions.go: sessions per client, requests per session, session owners
//   - principal.go: the principal a request is marked with
//   - auth.go: who a request is, its profile (ProfileOf, ByProfile), the
//     WWW-Authenticate challenge and the protected-resource metadata
//   - oidc.go: JWTs from an OAuth/OIDC issuer, claims mapped to profiles
//   - checks.go: Guard's checks for a handler that authenticates itself
//   - httpserver.go: the HTTP server's connection timeouts
package frontdoor
