// Package upstream is the gateway's side toward one upstream MCP server:
// connecting to it, keeping it connected, and calling through it. It sits
// between the hub and the wire in the proxy's data flow (server -> hub ->
// upstream -> wire): package proxy's Hub creates an [Upstream] per
// configured server with [New], handing it an [Env] of what it needs from
// its owner (settings, metrics, the progress router, the relay to the
// clients, vetting, and whom to tell of a new listing). This package
// imports nothing of the hub's, and checks what crosses the wire through
// package wire.
//
// # Map
//
// One upstream's life in upstream.go: [Upstream] runs its connect,
// handshake and listing, reconnects behind a breaker, admits calls up to
// Env.MaxInFlight, and reports its [Status] and [State]. Its configuration
// is [Config] (upstream_config.go), and what it needs from its owner [Env]
// (upstream_env.go). An attempt as people see it, its phase and why it
// failed (attempt.go), with the stderr lines that explain a failed start
// (stderrpick.go); its connect limit, stretched while a stdio child is
// busy (connectlimit.go, activity_linux.go); a half-installed npx folder
// explained and removed once (npxcache.go); a 401 and the command that
// logs in (authrequired.go).
//
// Dialling by transport (dial.go): the stdio child, its environment, its
// end with its descendants and its stderr (stdio*.go, killgroup_other.go,
// stderrlog.go, reap_*.go, with the watchdog); the
// bounds on HTTP bodies and streams (httpbound.go), same-origin redirects
// (redirect.go) and the shared HTTP transport (httppool.go).
//
// A call: its deadlines, idle and hard (deadline.go); draining on close
// (drain.go); progress routed back to its caller ([ProgressRouter],
// progress.go); what the upstream asks of, or tells, a client, passed to
// the [Relay] (relay.go); the rate limit on its notifications
// (notifylimit.go).
//
// What it offers: listings fetched page by page within bounds
// (listing.go), tool schemas kept as sent (rawtools.go), and the
// configured secrets kept out of its errors, logs and progress
// ([Scrubber], secretscrub.go).
package upstream
