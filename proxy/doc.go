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
// and workers, its mcp-go session and the in-order admission of its calls
// (serve_stdio*.go), the HTTP side: the ids of calls in flight, the
// answer to a request whose caller left while it waited, and the health
// probes (http.go), the grace period of a disconnected caller (grace.go),
// what an upstream asks of a client, sampling and elicitation, passed
// through, with completions and resource subscriptions passed to an
// upstream (passthrough.go), and the spans of requests and routing
// decisions (tracing.go). Sealed session ids, which any replica sharing
// the key resumes: sessionseal.go.
//
// The meta-tools, the gateway's own tools (request_more_tools, call_tool,
// describe_tools, routing_feedback, run_plan, plan), are package
// proxy/metatools with the belts of sessions and the handles of the
// stateless era; it uses the hub and the server through small interfaces
// and cannot import this package. The server builds them and registers
// their tools, handing them views of the hub and of itself, and the
// executor of plans over the hub (metatools.go).
//
// The hub: [Hub] and [Options] in hub.go; the catalog, its names and its
// "did you mean" (catalog.go; the URIs of MCP Apps views, unique per
// upstream, are proxy/apps's), the embedding index
// (indexer.go), edits, restarts and disabled upstreams (hubapply.go), the
// tools of upstreams still starting (startup.go), and the pipeline of a
// call (pipeline.go). Each tools/call becomes one [call.Call] at the edge
// (call.New, from what mcp-go and the front door put in the request's
// context) and passes through the stages listed once in (*Hub).stages:
// cap, audit, authorise, start-wait, argcheck, quota, approve (the
// person approves a gated call, proxy/approval), integrity, tracing, then
// the upstream call. The cap cuts a result too long for the model
// and keeps the whole in the hub's store of results (proxy/results), which
// the server serves as resources/read of mcp-router://results/<id> and
// the read_result meta-tool reads in pages, for the calling principal only. A resources/read or a prompts/get is a Call too (its
// Method says which), built by Hub.ReadResource or Hub.GetPrompt, and
// passes through the stages that apply to a read, listed once in
// readStages: authorise, start-wait, integrity, tracing. The stages are
// package proxy/call's, each built from the value or function of the hub
// it needs; TestPipelineOrder prints both orders.
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
// owners, profiles, trusted proxies) and the HTTP server's timeouts.
//
// Integrity, the glue between the hub and proxy/integrity: tool pins and
// poisoning scans of listings and the identity pins are kept under (vet.go,
// shadow.go), and screening of results and upstream errors
// (resultscan.go).
//
// What every room uses: failure kinds and sentinels, with the re-exported
// upstream API (upstream_api.go), and the Prometheus series and the recent
// call log (metrics.go).
package proxy
