// Package upstreamauth gets the gateway the credentials a remote (HTTP)
// upstream asks for, per the MCP authorization spec (2025-11-25).
//
// It sits between the configuration and the upstream's HTTP transport:
//
//   - [Login] is the interactive step behind `mcp-router auth login`: it
//     finds the upstream's authorization server (RFC 9728 protected
//     resource metadata, RFC 8414 or OpenID discovery), gets a client ID
//     (pre-registered in the configuration, a client ID metadata document,
//     or RFC 7591 dynamic registration), sends the person to the
//     authorization URL with PKCE (S256) and the RFC 8707 resource, takes
//     the redirect on a loopback listener and exchanges the code.
//   - [Vault] keeps what a login yields (tokens and the client
//     registration) sealed with AES-GCM in the state store ([Store]).
//   - [Authorizer] gives each request to an upstream its Authorization
//     header: the stored login's token, refreshed when it expires, or,
//     when the upstream is configured for RFC 8693 token exchange and the
//     caller came with a bearer token ([WithCallerToken]), a token
//     exchanged for that caller's, cached until it expires.
//
// Discovery, PKCE, registration, the code exchange and refresh are
// mark3labs/mcp-go's OAuthHandler; this package adds the choices it leaves
// to its user (scopes, the kind of registration), the loopback redirect,
// sealed storage and token exchange. Tokens never appear in logs or
// errors.
package upstreamauth
