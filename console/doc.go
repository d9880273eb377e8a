// Package console is the gateway's web console: server-rendered pages of its upstreams, catalog,
// tool pins, routing lessons, recent calls and a routing playground, for a person to look at rather
// than read.
//
// It sits beside the MCP endpoint: `serve --http` mounts [Console] at /ui, and `mcp-router ui`
// serves it on loopback from the shared state and the running gateways' heartbeats. Pages are
// html/template with htmx (embedded, like every asset: nothing is fetched from elsewhere).
//
// A browser cannot send a bearer token when it navigates, so the token is pasted once into the
// login form and exchanged for a session cookie (HttpOnly, SameSite=Strict, path /ui). Every
// request passes the Host check; a request with an Origin must come from an allowed one; a request
// that changes something is a POST with the session's CSRF token and an allowed Origin.
package console
