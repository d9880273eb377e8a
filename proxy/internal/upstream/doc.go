// Package upstream is the gateway's side toward one upstream MCP server:
// connecting to it, keeping it connected, and calling through it. It sits
// between the hub and the wire (server -> hub -> upstream -> wire):
// package proxy's Hub creates an [Upstream] per configured server with
// [New], handing it an [Env] of what it needs from its owner; this package
// imports nothing of the hub's.
//
// # Map
//
// upstream.go: an upstream's life (connect, handshake, listing, reconnect
// behind a breaker, admission of calls, [Status]); upstream_config.go:
// [Config] and [Env]; attempt.go, stderrlog.go: an attempt as people see
// it and why it failed; dial.go, stdio*.go, reap_*.go, killgroup_other.go,
// httpbound.go: the transports and the end of a child with its
// descendants; deadline.go, progress.go, relay.go, notifylimit.go,
// rawcall.go: a call and what the upstream sends during it; listing.go:
// what it offers, its resources and prompts scanned for poisoning;
// secretscrub.go: its configured secrets kept out of listings, errors,
// logs and progress ([Scrubber]).
package upstream
