// Package integrity guards the contracts of upstream tools before the hub
// shows them to the client's model. It sits between an upstream's
// tools/list answer and the hub's catalog, and has three parts:
//
//   - Rug-pull pinning. [Hash] digests a tool's whole contract (name,
//     title, description, input and output schema, annotations; never
//     _meta). A [Store] keeps one pin per upstream tool in a [PinStore]
//     (the gateway's state database). [Store.Check] pins tools it has not
//     seen (trust on first use) and reports a tool whose contract differs
//     from its pin as [VerdictChanged]; the hub hides a changed tool and
//     rejects calls to it until a person approves the new contract with
//     [Store.Approve] or [Store.ApproveByName]. The pending change is
//     written to the store, so the block survives a restart and another
//     process (the pins CLI) can list and approve it.
//
//   - Poisoning scan. [Scan] looks for hidden instructions, invisible
//     characters, references to secrets, oversized text and mentions of
//     other servers' tools in every text a model reads: the description,
//     the title, parameter names and every string nested in the schemas.
//     Under [Quarantine] a tool with findings is hidden and uncallable until
//     approved through the same pin approval; under [Warn] it is only
//     logged. [ToolNames] runs the shadowing part over a whole catalog at
//     once, for the hub to check every tool against every other upstream's
//     whatever order they were listed in.
//
//   - Untrusted annotations. An upstream's annotations are claims, not
//     facts: a server that says readOnlyHint or idempotentHint may be lying
//     to get its calls retried or let through without confirmation.
//     [TrustedAnnotations] returns the conservative reading (not read-only,
//     destructive, not idempotent, open world) that the gateway's retry and
//     confirmation policies must use; only the router's own configuration
//     can mark a tool safe or idempotent ([AnnotationTrust]). The hub shows
//     clients that reading, while pins keep hashing what the upstream sent.
//
// It also guards what tools return. [ScanResult] finds secrets (private
// keys, cloud and API tokens, JWTs) and injection markers in a tool
// result, between the upstream's answer and whoever reads it;
// [RedactResult] replaces the secrets and strips invisible characters,
// and a [ResultPolicy] says which the hub does.
//
// The package does no logging and starts no goroutines; the hub decides
// what to log and when to tell the client that the tool list changed.
package integrity
