// Package integrity guards the contracts of upstream tools before the hub
// shows them to the client's model. It sits between an upstream's
// tools/list answer and the hub's catalog, and has three parts:
//
//   - Rug-pull pinning. [Hash] digests a tool's whole contract (name,
//     title, description, input and output schema, annotations; never
//     _meta). A [Store] keeps one pin per upstream tool in pins.json under
//     the router's state directory. [Store.Check] pins tools it has not
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
//     logged.
//
//   - Untrusted annotations. An upstream's annotations are claims, not
//     facts: a server that says readOnlyHint or idempotentHint may be lying
//     to get its calls retried or let through without confirmation.
//     [TrustedAnnotations] returns the conservative reading (not read-only,
//     destructive, not idempotent, open world) that the gateway's retry and
//     confirmation policies must use; only the router's own configuration
//     can mark a tool safe or idempotent.
//
// The package does no logging and starts no goroutines; the hub decides
// what to log and when to tell the client that the tool list changed.
package integrity
