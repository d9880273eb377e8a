// Package state is the gateway's persisted state in one place: lessons,
// tool pins (with approvals and quarantine reasons), the embeddings cache
// and the registry of running gateways.
//
// [Open] opens state.db, an SQLite database in WAL mode (pure Go, no cgo)
// that any number of gateways and CLI commands on one machine use at
// once: every write is one short transaction, and a process that finds the
// database locked waits up to BusyTimeout. [OpenMemory] opens the same
// database in memory, for a run whose state directory cannot be written,
// and for tests. [OpenPostgres]
// keeps it in a PostgreSQL database instead, shared by gateways on several
// machines (replicas), with its own versioned schema. All three serve
// the small interfaces their callers define: [lessons.Store],
// [integrity.PinStore], [routing.VectorStore], and [Registry] here.
package state
