package state

import (
	"cmp"
	"context"
	"log/slog"
	"net/url"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/mcp-router/mcp-router/internal/defaults"
)

// PGOptions configures OpenPostgres. Zero values take the defaults in
// brackets.
type PGOptions struct {
	// URL is a postgres:// URL or key=value string; messages redact its
	// password.
	URL string
	// MaxConns bounds the connections this process opens [4].
	MaxConns int32
	// Timeout bounds each call of the interfaces that take no context
	// (pins, vectors) and the connection at open [10s].
	Timeout time.Duration
	// Logger receives the migrations applied; nil is silent.
	Logger *slog.Logger
}

// Defaults of PGOptions.
const (
	DefaultPGMaxConns = 4
	DefaultPGTimeout  = 10 * time.Second
)

func (o *PGOptions) defaults() {
	o.MaxConns = cmp.Or(max(o.MaxConns, 0), DefaultPGMaxConns)
	defaults.Set(&o.Timeout, DefaultPGTimeout)
	o.Logger = cmp.Or(o.Logger, slog.New(slog.DiscardHandler))
}

// PG is the state in a PostgreSQL database, shared by every process that
// opens the same URL, with DB's behaviour; safe for concurrent use.
type PG struct {
	stores
	name    string // the URL without its password
	pool    *pgxpool.Pool
	timeout time.Duration
	log     *slog.Logger
}

// redactURL is raw without its password, for messages.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" {
		return "the PostgreSQL database" // a key=value string, or one that does not parse
	}
	return u.Redacted()
}

// OpenPostgres connects to the database at opts.URL and brings its schema
// up to date. Errors are *OpenError.
func OpenPostgres(ctx context.Context, opts PGOptions) (*PG, error) {
	opts.defaults()
	name := redactURL(opts.URL)
	cfg, err := pgxpool.ParseConfig(opts.URL)
	if err != nil {
		return nil, &OpenError{name, err} // pgx redacts the password in its parse errors
	}
	cfg.MaxConns = opts.MaxConns
	if cfg.ConnConfig.ConnectTimeout == 0 {
		cfg.ConnConfig.ConnectTimeout = opts.Timeout
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, &OpenError{name, err}
	}
	db := &PG{name: name, pool: pool, timeout: opts.Timeout, log: opts.Logger}
	db.stores = stores{db.engine()}
	if err := db.migrate(ctx); err != nil {
		pool.Close()
		return nil, &OpenError{name, err}
	}
	return db, nil
}

// Close closes the connections.
func (db *PG) Close() error {
	db.pool.Close()
	return nil
}

// pgMigrations are the schema's versions, as migrations. Times are unix
// nanoseconds, 0 for none, as in state.db.
var pgMigrations = []string{
	`CREATE TABLE counters (name TEXT PRIMARY KEY, n BIGINT NOT NULL);
	INSERT INTO counters (name, n) VALUES ('lessons', 0), ('pins', 0), ('lesson_ids', 0);
	CREATE TABLE lessons (
		id BIGINT PRIMARY KEY,
		query TEXT NOT NULL, tool TEXT NOT NULL, polarity INTEGER NOT NULL,
		source TEXT NOT NULL, note TEXT NOT NULL,
		created BIGINT NOT NULL, last_used BIGINT NOT NULL, uses BIGINT NOT NULL);
	CREATE TABLE pins (
		upstream TEXT NOT NULL, tool TEXT NOT NULL, hash TEXT NOT NULL,
		first_seen BIGINT NOT NULL, approved_at BIGINT NOT NULL, description_excerpt TEXT NOT NULL,
		pending_hash TEXT NOT NULL, changed_at BIGINT NOT NULL, pending_excerpt TEXT NOT NULL,
		held TEXT NOT NULL, contract TEXT NOT NULL, pending_contract TEXT NOT NULL,
		PRIMARY KEY (upstream, tool));
	CREATE TABLE vectors (model TEXT NOT NULL, key BYTEA NOT NULL, vec BYTEA NOT NULL,
		PRIMARY KEY (model, key));
	CREATE TABLE gateways (
		id TEXT PRIMARY KEY, pid BIGINT NOT NULL, started BIGINT NOT NULL,
		profile TEXT NOT NULL, config TEXT NOT NULL, transport TEXT NOT NULL, addr TEXT NOT NULL,
		version TEXT NOT NULL, heartbeat BIGINT NOT NULL, snapshot TEXT NOT NULL);`,
	// One row per tool call (audit.Record), the newest audit.MaxRows kept.
	`CREATE TABLE audit (
		id BIGSERIAL PRIMARY KEY, at BIGINT NOT NULL,
		principal TEXT NOT NULL, session TEXT NOT NULL, tool TEXT NOT NULL, upstream TEXT NOT NULL,
		plan TEXT NOT NULL, step TEXT NOT NULL, outcome TEXT NOT NULL,
		duration_ns BIGINT NOT NULL, request_bytes BIGINT NOT NULL, response_bytes BIGINT NOT NULL);
	CREATE INDEX audit_at ON audit (at);`,
	// Upstream logins (tokens and client registrations), sealed by
	// upstreamauth: never in the clear.
	`CREATE TABLE upstream_credentials (
		upstream TEXT NOT NULL, subject TEXT NOT NULL, sealed BYTEA NOT NULL, updated BIGINT NOT NULL,
		PRIMARY KEY (upstream, subject));`,
	// Calls per quota key in fixed windows (QuotaCounts).
	`CREATE TABLE quota_counts (key TEXT NOT NULL, win BIGINT NOT NULL, n BIGINT NOT NULL,
		PRIMARY KEY (key, win));`,
	// HTTP sessions ended by a client, by a hash of their id, until their
	// id expires (EndedSessions).
	`CREATE TABLE ended_sessions (key BYTEA PRIMARY KEY, expires BIGINT NOT NULL);
	CREATE INDEX ended_sessions_expires ON ended_sessions (expires);`,
	// Whose routing a lesson teaches ('' for every principal's).
	`ALTER TABLE lessons ADD COLUMN principal TEXT NOT NULL DEFAULT '';`,
	// Whose sessions the ended ones were (a hash), each owner's bounded.
	`ALTER TABLE ended_sessions ADD COLUMN owner BYTEA NOT NULL DEFAULT '';
	CREATE INDEX ended_sessions_owner ON ended_sessions (owner, expires);`,
	// Since when a pinned tool is no longer listed (0 while it is).
	`ALTER TABLE pins ADD COLUMN gone_since BIGINT NOT NULL DEFAULT 0;`,
	// How a gated call was approved (audit.Record.Approval).
	`ALTER TABLE audit ADD COLUMN approval TEXT NOT NULL DEFAULT '';`,
	// Who answered for a gated call in the console (audit.Record.Approver).
	`ALTER TABLE audit ADD COLUMN approver TEXT NOT NULL DEFAULT '';`,
}

// migrateLock is the advisory lock key held while migrating ("mcprtr").
const migrateLock = 0x6d6370727472

// migrate brings the schema to the latest version under an advisory lock,
// so that gateways starting at once apply each migration once.
func (db *PG) migrate(ctx context.Context) error {
	return db.b.migrate(ctx, pgMigrations, `SELECT pg_advisory_xact_lock(`+strconv.Itoa(migrateLock)+`)`, db.log)
}
