package state

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"modernc.org/sqlite" // registers the "sqlite" driver
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/mcp-router/mcp-router/internal/defaults"
)

// FileName is the database's name in the state directory.
const FileName = "state.db"

// Options configures Open. Zero values take the defaults in brackets.
type Options struct {
	// Dir is the state directory; it is created (0700) when missing.
	Dir string
	// BusyTimeout is how long a statement waits for another process's
	// write transaction before it fails [5s].
	BusyTimeout time.Duration
}

// DefaultBusyTimeout is Options.BusyTimeout's default.
const DefaultBusyTimeout = 5 * time.Second

// DB is the state in state.db, safe for concurrent use by processes.
type DB struct {
	stores
	path string
	db   *sql.DB
}

// OpenError is why Open failed, and the file.
type OpenError struct {
	Path string
	Err  error
}

func (e *OpenError) Error() string { return fmt.Sprintf("opening %s: %v", e.Path, e.Err) }

// openError is the OpenError of path, without err's own mention of it.
func openError(path string, err error) *OpenError {
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Path == path {
		err = pe.Err
	}
	return &OpenError{path, err}
}
func (e *OpenError) Unwrap() error { return e.Err }

// Open opens (creating when missing, mode 0600) state.db in opts.Dir and
// brings its schema up to date. A corrupt file is an *OpenError, never
// rewritten.
func Open(ctx context.Context, opts Options) (*DB, error) {
	defaults.Set(&opts.BusyTimeout, DefaultBusyTimeout)
	path := filepath.Join(opts.Dir, FileName)
	if err := os.MkdirAll(opts.Dir, 0o700); err != nil {
		return nil, openError(path, err)
	}
	// Create the file first so that it gets mode 0600, not the umask's.
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, openError(path, err)
	}
	f.Close()
	dsn := path + "?_txlock=immediate" +
		"&_pragma=busy_timeout(" + strconv.FormatInt(opts.BusyTimeout.Milliseconds(), 10) + ")" +
		"&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)"
	return openSQLite(ctx, path, dsn, 4, opts.BusyTimeout)
}

// openSQLite opens the database at dsn with conns connections, all kept
// open, and brings its schema up to date, waiting up to busy for other
// processes opening it at the same time.
func openSQLite(ctx context.Context, path, dsn string, conns int, busy time.Duration) (*DB, error) {
	sdb, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, openError(path, err)
	}
	sdb.SetMaxOpenConns(conns)
	sdb.SetMaxIdleConns(conns)
	db := &DB{path: path, db: sdb}
	db.stores = stores{db.engine()}
	if err := retryBusy(ctx, busy, db.migrate); err != nil {
		sdb.Close()
		return nil, openError(path, err)
	}
	return db, nil
}

// OpenMemory opens a state of its own in memory, as state.db but writing
// no file, for a run whose state cannot be opened and for tests.
func OpenMemory(ctx context.Context) (*DB, error) {
	// Each connection to :memory: is a database of its own: keep one.
	return openSQLite(ctx, ":memory:", ":memory:?_txlock=immediate&_pragma=temp_store(MEMORY)", 1, 0)
}

// retryBusy runs fn until it does not fail with SQLITE_BUSY or wait has
// passed. A connection's first statements (the switch to WAL, reading a
// WAL file another process is recovering) can fail busy at once, without
// the busy handler that waits for a lock: seen when several processes
// open a new state.db together.
func retryBusy(ctx context.Context, wait time.Duration, fn func(context.Context) error) error {
	deadline := time.Now().Add(wait)
	for {
		err := fn(ctx)
		var se *sqlite.Error
		if err == nil || !errors.As(err, &se) || se.Code()&0xff != sqlite3.SQLITE_BUSY || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// NewMemory is OpenMemory that panics on an error (a broken build).
func NewMemory() *DB {
	db, err := OpenMemory(context.Background())
	if err != nil {
		panic(err)
	}
	return db
}

// Close closes the database.
func (db *DB) Close() error {
	if err := db.db.Close(); err != nil {
		return fmt.Errorf("closing %s: %w", db.path, err)
	}
	return nil
}

// migrations are the schema's versions: migrations[i] takes the schema
// from version i to i+1. Append, never edit.
var migrations = []string{
	`CREATE TABLE counters (name TEXT PRIMARY KEY, n INTEGER NOT NULL) WITHOUT ROWID;
	INSERT INTO counters (name, n) VALUES ('lessons', 0), ('pins', 0);
	CREATE TABLE lessons (
		id INTEGER PRIMARY KEY AUTOINCREMENT,
		query TEXT NOT NULL, tool TEXT NOT NULL, polarity INTEGER NOT NULL,
		source TEXT NOT NULL, note TEXT NOT NULL,
		created INTEGER NOT NULL, last_used INTEGER NOT NULL, uses INTEGER NOT NULL);
	CREATE TABLE pins (
		upstream TEXT NOT NULL, tool TEXT NOT NULL, hash TEXT NOT NULL,
		first_seen INTEGER NOT NULL, approved_at INTEGER NOT NULL, description_excerpt TEXT NOT NULL,
		pending_hash TEXT NOT NULL, changed_at INTEGER NOT NULL, pending_excerpt TEXT NOT NULL,
		held TEXT NOT NULL,
		PRIMARY KEY (upstream, tool)) WITHOUT ROWID;
	CREATE TABLE vectors (model TEXT NOT NULL, key BLOB NOT NULL, vec BLOB NOT NULL,
		PRIMARY KEY (model, key)) WITHOUT ROWID;
	CREATE TABLE gateways (
		id TEXT PRIMARY KEY, pid INTEGER NOT NULL, started INTEGER NOT NULL,
		profile TEXT NOT NULL, config TEXT NOT NULL, transport TEXT NOT NULL, addr TEXT NOT NULL,
		version TEXT NOT NULL, heartbeat INTEGER NOT NULL, snapshot TEXT NOT NULL) WITHOUT ROWID;
	CREATE TABLE imports (path TEXT PRIMARY KEY, at INTEGER NOT NULL) WITHOUT ROWID;`,
	// The pinned and pending contracts, for showing what changed.
	`ALTER TABLE pins ADD COLUMN contract TEXT NOT NULL DEFAULT '';
	ALTER TABLE pins ADD COLUMN pending_contract TEXT NOT NULL DEFAULT '';`,
	// One row per tool call (audit.Record), the newest audit.MaxRows kept.
	`CREATE TABLE audit (
		id INTEGER PRIMARY KEY AUTOINCREMENT, at INTEGER NOT NULL,
		principal TEXT NOT NULL, session TEXT NOT NULL, tool TEXT NOT NULL, upstream TEXT NOT NULL,
		plan TEXT NOT NULL, step TEXT NOT NULL, outcome TEXT NOT NULL,
		duration_ns INTEGER NOT NULL, request_bytes INTEGER NOT NULL, response_bytes INTEGER NOT NULL);
	CREATE INDEX audit_at ON audit (at);`,
	// Upstream logins (tokens and client registrations), sealed by
	// upstreamauth: never in the clear.
	`CREATE TABLE upstream_credentials (
		upstream TEXT NOT NULL, subject TEXT NOT NULL, sealed BLOB NOT NULL, updated INTEGER NOT NULL,
		PRIMARY KEY (upstream, subject)) WITHOUT ROWID;`,
	// Calls per quota key in fixed windows (QuotaCounts).
	`CREATE TABLE quota_counts (key TEXT NOT NULL, win INTEGER NOT NULL, n INTEGER NOT NULL,
		PRIMARY KEY (key, win)) WITHOUT ROWID;`,
	// HTTP sessions ended by a client, by a hash of their id, until their
	// id expires (EndedSessions).
	`CREATE TABLE ended_sessions (key BLOB PRIMARY KEY, expires INTEGER NOT NULL) WITHOUT ROWID;
	CREATE INDEX ended_sessions_expires ON ended_sessions (expires);`,
	// Whose routing a lesson teaches ('' for every principal's).
	`ALTER TABLE lessons ADD COLUMN principal TEXT NOT NULL DEFAULT '';`,
	// Whose sessions the ended ones were (a hash), each owner's bounded.
	`ALTER TABLE ended_sessions ADD COLUMN owner BLOB NOT NULL DEFAULT x'';
	CREATE INDEX ended_sessions_owner ON ended_sessions (owner, expires);`,
	// Since when a pinned tool is no longer listed (0 while it is).
	`ALTER TABLE pins ADD COLUMN gone_since INTEGER NOT NULL DEFAULT 0;`,
	// How a gated call was approved (audit.Record.Approval).
	`ALTER TABLE audit ADD COLUMN approval TEXT NOT NULL DEFAULT '';`,
	// Who answered for a gated call in the console (audit.Record.Approver).
	`ALTER TABLE audit ADD COLUMN approver TEXT NOT NULL DEFAULT '';`,
}

// migrate brings the schema to the latest version.
func (db *DB) migrate(ctx context.Context) error {
	return db.b.migrate(ctx, migrations, "", nil)
}

// write runs fn in a write transaction, committed when fn returns nil.
// It begins IMMEDIATE, so two writers never deadlock upgrading a read.
func (db *DB) write(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, err := db.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		return errors.Join(err, tx.Rollback())
	}
	return tx.Commit()
}

// nanos is t as stored: unix nanoseconds, 0 for the zero time.
func nanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// fromNanos is nanos's inverse, in UTC.
func fromNanos(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}
