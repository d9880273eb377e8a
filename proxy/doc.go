// Package proxy is both sides of the gateway: a [Server] faces the client
// over stdio or streamable HTTP and shows it a small belt of tools; a [Hub]
// holds the upstream connections (stdio children, streamable HTTP, SSE,
// in-process built-ins) and their aggregated, namespaced catalog, and
// calls through them.
//
// # Data flow
//
// A client message goes down the rooms below, and its answer comes back up:
//
//	front door -> server (-> metatools) -> hub -> upstream -> wire
//
// The hub reaches a client only through the [Relay] the server gives it.
// internal/upstream imports nothing of this package: what an upstream
// needs from its owner is handed to it in an upstream.Env, which the hub
// fills. TestRoomsFlowOneWay and TestUpstreamImportsNothingAbove keep the
// flow one way.
//
// # Rooms
//
// The server: server.go, with the search hints (hints.go), rate limits
// (ratelimit.go), the stdio connection (serve_stdio*.go), the HTTP side
// and health probes (http.go), the disconnect grace period (grace.go) and
// the drain of calls at shutdown (drain.go),
// sampling, elicitation, completions and subscriptions passed through, and
// reads and prompts held while their server starts (passthrough.go),
// list_changed gating (listgate.go), spans
// (tracing.go) and sealed session ids (sessionseal.go). The meta-tools
// are package proxy/metatools; metatools.go builds them and hands them
// views of the hub and of the server.
//
// The hub: hub.go, the catalog (catalog.go), the embedding index
// (indexer.go), edits, restarts and disabled upstreams (hubapply.go),
// upstreams still starting (startup.go) and the pipeline (pipeline.go).
// Each tools/call becomes one [call.Call] at the edge and passes through
// the stages listed once in (*Hub).stages; a resources/read or a
// prompts/get passes through readStages. TestPipelineOrder prints both.
//
// Integrity glue: tool pins, poisoning and shadowing scans (vet.go), and
// screening of results and upstream errors (resultscan.go). What every
// room uses: failure kinds and the re-exported upstream API
// (upstream_api.go), and the Prometheus series and call log (metrics.go).
package proxy
