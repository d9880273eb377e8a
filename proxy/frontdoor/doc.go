// Package frontdoor holds the checks every HTTP request passes before it
// reaches the MCP server: Guard checks its Host and Origin, bearer token,
// body and session bounds, marks its context with the caller's principal
// and profile, and hands it on (to ByProfile, say).
//
//   - guard.go: Guard and its Options, CheckListen, SessionIdleTTL
//   - sessions.go: sessions per client, requests per session, owners
//   - principal.go, auth.go: who a request is, its profile, the challenge
//     and the protected-resource metadata
//   - oidc.go: JWTs from an OAuth/OIDC issuer
//   - clientaddr.go, failedtokens.go: client addresses, refused tokens
//   - checks.go: Guard's checks for a handler that authenticates itself
//   - httpserver.go: the HTTP server's connection timeouts
package frontdoor
