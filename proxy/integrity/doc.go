// Package integrity guards the contracts of upstream tools before the hub
// shows them to the client's model, between an upstream's tools/list
// answer and the hub's catalog:
//
//   - Rug-pull pinning: a [Store] keeps each tool's [Contract.Hash] in a
//     [PinStore]; [Store.Check] pins new tools (trust on first use) and
//     reports changed ones as [VerdictChanged], hidden until a person
//     approves them ([Store.ApproveShown]). Pending
//     changes are stored, so they survive a restart and the pins CLI sees them.
//   - Poisoning scan: [Scan] looks for hidden instructions, invisible
//     characters, references to secrets, oversized text and other servers'
//     tool names in every text a model reads; [Policy] says whether a tool
//     with findings is held back. [ToolNames] checks a whole catalog.
//   - Untrusted annotations: [TrustedAnnotations] is the conservative
//     reading of an upstream's hints; only the configuration can vouch for
//     more ([AnnotationTrust]).
//   - Results: [ScanResult] finds secrets and injection markers in a tool
//     result, [RedactResult] removes them, and a [ResultPolicy] says which
//     the hub does.
//
// The package does no logging and starts no goroutines.
package integrity
