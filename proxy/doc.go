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
//	front door -> server (-> metatools) -> hub -> upstream -> wire
//
// The hub never calls the server: it reaches a client only through the
// [Relay] the server gives it. The upstreams are a package of their own
// (internal/upstream), which imports nothing of this one: what an upstream
// needs from its owner (settings, metrics, the progress router, the
// relay, vetting, and whom to tell of a new listing) is handed to it at
// creation in an upstream.Env, which the hub fills. The wire package
// (internal/wire) imports nothing of either, and integrity
// (proxy/integrity) is called by the hub and knows nothing of it. The
// routing, planner and executor packages sit beside the server, called by
// it. TestRoomsFlowOneWay maps each file of this package to its room and
// counts the uses of names of a room above; TestUpstreamImportsNothingAbove
// keeps internal/upstream from importing the rooms above it.
//
// # Rooms
//
// The server: [Server] and [ServerOptions] in server.go; the
// hints for clients that search tools themselves (hints.go), per-session
// rate limits (ratelimit.go), a stdio client's connection: its read loop
// and workers and its mcp-go session (serve_stdio*.go) and the in-order
// admission of its calls (stdioorder.go), the ids of calls in flight
// (inflight.go), the grace period of a disconnected caller (grace.go), and what an upstream asks of a client,
// sampling and elicitation, passed through (passthrough.go), and the spans
// of requests and routing decisions (tracing_server.go). Sealed session
// ids, which any replica sharing the key resumes: sessionseal.go,
// sessionkey.go.
//
// The meta-tools, the gateway's own tools (request_more_tools, call_tool,
// describe_tools, routing_feedback, run_plan, plan), are package
// proxy/metatools with the belts of sessions and the handles of the
// stateless era; it uses the hub and the server through small interfaces
// and cannot import this package. The server builds them and registers
// their tools, handing them views of the hub and of itself (metatools.go);
// plan.go is the executor of plans over the hub.
//
// The hub: [Hub] and [Options] in hub.go; the catalog, its names and its
// "did you mean" (catalog.go, names.go, suggest.go), the checks of a
// call's arguments against the tool's schema (argcheck.go), the quotas of
// each principal (quota.go), the embedding index (indexer.go),
// completions and resource subscriptions passed to an upstream
// (requests.go), restarts (restart.go), the tools of upstreams still
// starting (startup.go), health (health.go), audit records (auditcall.go,
// and auditsize.go, which counts a result's size without encoding it) and
// the spans of upstream calls (tracing.go).
//
// The upstreams (internal/upstream): one upstream's life (connect,
// handshake, call, reconnect behind a breaker), its configuration, the
// stdio child, HTTP bounds and redirects, call deadlines, listings,
// progress, notifications and the secrets kept out of its errors; its
// package doc is the map. What of it is proxy's API, [UpstreamConfig],
// [State], [Status], the transports, [Relay], [Progress] and their
// defaults and errors, is re-exported here as aliases (upstream_api.go).
//
// The wire (internal/wire): every JSON-RPC message that crosses an edge
// is checked there before mcp-go reads it: client messages by the
// pre-check, upstream lines and replies by the line and reply checks.
//
// The front door (proxy/frontdoor): the HTTP checks before a request
// reaches the MCP server (Host and Origin, tokens and OIDC, sessions'
// owners, profiles, trusted proxies) and the HTTP server's timeouts; here,
// only the answer to a request whose caller left while it waited
// (unanswered.go).
//
// Integrity, the glue between the hub and proxy/integrity: tool pins and
// poisoning scans of listings (vet.go, shadow.go), and screening of
// results and upstream errors (resultscan.go).
//
// What every room uses: who is calling, the principal and the session of
// a context (caller.go), failure kinds and sentinels (errors.go),
// Prometheus series (metrics.go) and the recent call log (calllog.go).
package proxy
