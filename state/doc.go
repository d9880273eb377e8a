// Package state is the gateway's persisted state in one place: lessons,
// tool pins, the embeddings cache, the audit trail, upstream credentials,
// quotas, ended sessions and the registry of running gateways.
//
// [Open] opens state.db, an SQLite database in WAL mode that the gateways
// and CLI commands of one machine share (each write one short
// transaction); [OpenMemory] the same in memory, for a run whose state
// cannot be opened and for tests; [OpenPostgres] a PostgreSQL database
// shared by replicas on several machines. All serve the small interfaces
// their callers define ([lessons.Store], [integrity.PinStore], ...).
package state
