// Package proxy is both sides of the gateway: a [Server] faces the client
// over stdio or streamable HTTP and shows it a small belt of tools; a [Hub]
// holds the upstream connections (stdio children, streamable HTTP, SSE,
// in-process built-ins) and their aggregated, namespaced catalog, and
// calls through them.
//
// # Data flow
//
// A client message goes one way, down the rooms below, and its answer
// comes back up the same path:
//
//	front door -> server -> meta-tools / plans -> hub -> upstream -> wire
//
// The hub never calls the server: it reaches a client only through the
// [Relay] the server gives it. The wire package (internal/wire) imports
// nothing of this one, and integrity (proxy/integrity) is called by the
// hub and knows nothing of it. The routing, planner and executor packages
// sit beside the server, called by it. One use still runs back up inside
// the package: an upstream holds its hub, for the shared metrics, relay,
// progress and pins.
//
// # Rooms
//
// The server: [Server] and [ServerOptions] in server.go; the belt of tools a
// session sees (belt.go, handle.go for the stateless protocol era), the
// hints for clients that search tools themselves (hints.go), per-session
// rate limits (ratelimit.go), a stdio client's connection: its read loop
// and workers and its mcp-go session (serve_stdio*.go) and the in-order
// admission of its calls (stdioorder.go), the ids of calls in flight (inflight.go), the grace period of a
// disconnected caller (grace.go), and what an upstream asks of a client,
// sampling and elicitation, passed through (passthrough.go).
//
// The meta-tools, the gateway's own tools: request_more_tools
// (discover.go, with outage.go), call_tool (calltool.go, which
// also serves a call held while its upstream starts), describe_tools
// (describe.go), routing_feedback (feedback.go), the bounds on what the
// model hands them (inputs.go) and the table they all come from
// (metatools.go).
//
// The plans: run_plan (plan.go) and the tools a plan may name
// (plantools.go); the executor package runs them.
//
// The hub: [Hub] and [Options] in hub.go; the catalog, its names and its
// "did you mean" (catalog.go, names.go, suggest.go), the checks of a
// call's arguments against the tool's schema (argcheck.go), the quotas of
// each principal (quota.go), the listings an upstream announces (listing.go),
// the embedding index (indexer.go), the relay to the server (relay.go),
// progress (progress.go), restarts and draining (restart.go, drain.go),
// start-up as people see it (startup.go), health (health.go), audit
// records (auditcall.go) and traces (tracing.go).
//
// The upstreams: one upstream's life in upstream.go (connect, handshake,
// call, reconnect behind a breaker) and its configuration in
// upstream_config.go; dialling by transport (dial.go), the stdio child
// (stdio*.go, reap_*.go, killgroup_unix.go, stderrlog.go), HTTP bounds and
// redirects (httpbound.go, redirect.go), the call deadlines (deadline.go),
// the notification limit (notifylimit.go), and tool schemas kept as sent
// (rawtools.go).
//
// The wire (internal/wire): every JSON-RPC message that crosses an edge
// is checked there before mcp-go reads it: client messages by the
// pre-check, upstream lines and replies by the line and reply checks.
//
// The front door: the HTTP checks before a request reaches the MCP
// server (guard.go, principal.go, frontdoor.go, frontdoor_wire.go) and
// the HTTP server's timeouts (httpserver.go).
//
// Integrity, the glue between the hub and proxy/integrity: tool pins and
// poisoning scans of listings (vet.go, shadow.go), screening of results
// (resultscan.go) and scrubbing configured secrets from what upstreams
// send back (secretscrub.go).
//
// What every room uses: who is calling, the principal and the session of
// a context (caller.go), failure kinds and sentinels (errors.go),
// Prometheus series (metrics.go) and the recent call log (calllog.go).
package proxy
