// Package upstreamauth gets the gateway the credentials a remote (HTTP)
// upstream asks for, per the MCP authorization spec (2025-11-25).
//
//   - [Login], behind `mcp-router auth login`, discovers the upstream's
//     authorization server, gets a client ID (configured, a metadata
//     document, or dynamic registration), sends the person to authorize
//     with PKCE and takes the code on a loopback redirect.
//   - [Vault] keeps the tokens and client sealed with AES-GCM in a [Store].
//   - [Authorizer] gives each request its Authorization header: the
//     stored login's token, refreshed, or a token exchanged (RFC 8693)
//     for the caller's ([WithCallerToken]).
//
// mcp-go's OAuthHandler does discovery, PKCE, registration, the code
// exchange and refresh; x/oauth2 the token exchange. Tokens never appear
// in logs or errors.
package upstreamauth
