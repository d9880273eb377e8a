package state

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/mcp-router/mcp-router/proxy/integrity"
	"github.com/mcp-router/mcp-router/routing"
	"github.com/mcp-router/mcp-router/routing/lessons"
)

// PGOptions configures OpenPostgres. Zero values take the defaults in
// brackets.
type PGOptions struct {
	// URL is the database's postgres:// URL (or a key=value connection
	// string). It may hold a password: messages show it redacted.
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
	if o.MaxConns <= 0 {
		o.MaxConns = DefaultPGMaxConns
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultPGTimeout
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
}

// PG is the state in a PostgreSQL database, shared by every gateway and
// CLI command that opens the same URL, on any machine. It serves the same
// interfaces as DB, with the same behaviour. It is safe for concurrent use.
type PG struct {
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
// up to date. Gateways starting together migrate once: the migration runs
// in one transaction under an advisory lock. Errors are *OpenError, with
// the URL's password redacted.
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
	if err := db.migrate(ctx); err != nil {
		pool.Close()
		return nil, &OpenError{name, err}
	}
	return db, nil
}

// Path returns the database's URL, without its password.
func (db *PG) Path() string { return db.name }

// Close closes the connections.
func (db *PG) Close() error {
	db.pool.Close()
	return nil
}

// pgMigrations are the schema's versions: pgMigrations[i] takes it from
// version i to i+1. Append, never edit. Times are unix nanoseconds, 0 for
// none, as in state.db.
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
}

// migrateLock is the advisory lock key held while migrating ("mcprtr").
const migrateLock = 0x6d6370727472

// migrate brings the schema to the latest version in one transaction,
// holding an advisory lock so that gateways starting at once apply each
// migration once.
func (db *PG) migrate(ctx context.Context) error {
	return db.write(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(migrateLock)); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)`); err != nil {
			return err
		}
		var v int
		err := tx.QueryRow(ctx, `SELECT version FROM schema_version`).Scan(&v)
		if errors.Is(err, pgx.ErrNoRows) {
			_, err = tx.Exec(ctx, `INSERT INTO schema_version (version) VALUES (0)`)
		}
		if err != nil {
			return err
		}
		if v > len(pgMigrations) {
			return fmt.Errorf("schema version %d is newer than this mcp-router knows (%d)", v, len(pgMigrations))
		}
		for i := v; i < len(pgMigrations); i++ {
			if _, err := tx.Exec(ctx, pgMigrations[i]); err != nil {
				return fmt.Errorf("migrating schema to version %d: %w", i+1, err)
			}
			db.log.Info("state schema migrated", "db", db.name, "version", i+1)
		}
		if v < len(pgMigrations) {
			_, err = tx.Exec(ctx, `UPDATE schema_version SET version = $1`, len(pgMigrations))
		}
		return err
	})
}

// write runs fn in a transaction and commits it when fn returns nil.
func (db *PG) write(ctx context.Context, fn func(pgx.Tx) error) error {
	return pgx.BeginFunc(ctx, db.pool, fn)
}

// noCtx is the context of a call whose interface has none: bounded by
// the timeout, so that an unreachable database cannot hang it.
func (db *PG) noCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), db.timeout)
}

func pgBump(ctx context.Context, tx pgx.Tx, counter string) error {
	_, err := tx.Exec(ctx, `UPDATE counters SET n = n + 1 WHERE name = $1`, counter)
	return err
}

// Lessons returns the lessons.Store in the database. Its Close does
// nothing: the PG's owner closes it.
func (db *PG) Lessons() lessons.Store { return &pgLessons{db} }

type pgLessons struct{ db *PG }

var _ lessons.Store = (*pgLessons)(nil)

func (s *pgLessons) Put(ctx context.Context, l lessons.Lesson) (lessons.Lesson, error) {
	err := s.db.write(ctx, func(tx pgx.Tx) error {
		if err := pgPutLesson(ctx, tx, &l); err != nil {
			return err
		}
		return pgBump(ctx, tx, "lessons")
	})
	if err != nil {
		return lessons.Lesson{}, fmt.Errorf("putting lesson %d in %s: %w", l.ID, s.db.name, err)
	}
	return l, nil
}

func (s *pgLessons) PutAll(ctx context.Context, ls []lessons.Lesson) error {
	err := s.db.write(ctx, func(tx pgx.Tx) error {
		for i := range ls {
			if ls[i].ID == 0 {
				return errors.New("lesson without an ID")
			}
			if err := pgPutLesson(ctx, tx, &ls[i]); err != nil {
				return fmt.Errorf("lesson %d: %w", ls[i].ID, err)
			}
		}
		return pgBump(ctx, tx, "lessons")
	})
	if err != nil {
		return fmt.Errorf("putting %d lessons in %s: %w", len(ls), s.db.name, err)
	}
	return nil
}

// pgPutLesson inserts or replaces l. IDs come from the lesson_ids
// counter, which only grows (like SQLite's AUTOINCREMENT), so that an ID
// is never reused after a delete or a clear.
func pgPutLesson(ctx context.Context, tx pgx.Tx, l *lessons.Lesson) error {
	if l.ID < 0 {
		return fmt.Errorf("negative lesson ID %d", l.ID)
	}
	var err error
	if l.ID == 0 {
		err = tx.QueryRow(ctx, `UPDATE counters SET n = n + 1 WHERE name = 'lesson_ids' RETURNING n`).Scan(&l.ID)
	} else {
		_, err = tx.Exec(ctx, `UPDATE counters SET n = GREATEST(n, $1) WHERE name = 'lesson_ids'`, l.ID)
	}
	if err != nil {
		return err
	}
	_, err = tx.Exec(ctx, `INSERT INTO lessons (`+lessonColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
		ON CONFLICT (id) DO UPDATE SET query = EXCLUDED.query, tool = EXCLUDED.tool, polarity = EXCLUDED.polarity,
		source = EXCLUDED.source, note = EXCLUDED.note, created = EXCLUDED.created,
		last_used = EXCLUDED.last_used, uses = EXCLUDED.uses, principal = EXCLUDED.principal`,
		l.ID, l.Query, l.Tool, int(l.Polarity), l.Source, l.Note, nanos(l.Created), nanos(l.LastUsed), l.Uses, l.Principal)
	return err
}

func (s *pgLessons) All(ctx context.Context) ([]lessons.Lesson, error) {
	rows, err := s.db.pool.Query(ctx, selectLessons)
	if err != nil {
		return nil, fmt.Errorf("reading lessons from %s: %w", s.db.name, err)
	}
	defer rows.Close()
	out, err := readLessons(rows)
	if err != nil {
		return nil, fmt.Errorf("reading lessons from %s: %w", s.db.name, err)
	}
	return out, nil
}

func (s *pgLessons) Delete(ctx context.Context, id int64) error {
	err := s.db.write(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `DELETE FROM lessons WHERE id = $1`, id)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return lessons.ErrNotFound
		}
		return pgBump(ctx, tx, "lessons")
	})
	if err != nil {
		return fmt.Errorf("deleting lesson %d from %s: %w", id, s.db.name, err)
	}
	return nil
}

func (s *pgLessons) Clear(ctx context.Context) error {
	err := s.db.write(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `DELETE FROM lessons`); err != nil {
			return err
		}
		return pgBump(ctx, tx, "lessons")
	})
	if err != nil {
		return fmt.Errorf("clearing lessons in %s: %w", s.db.name, err)
	}
	return nil
}

// Version changes whenever any process changes the lessons.
func (s *pgLessons) Version(ctx context.Context) (int64, error) {
	var n int64
	if err := s.db.pool.QueryRow(ctx, `SELECT n FROM counters WHERE name = 'lessons'`).Scan(&n); err != nil {
		return 0, fmt.Errorf("reading the lessons' version from %s: %w", s.db.name, err)
	}
	return n, nil
}

func (s *pgLessons) Close() error { return nil }

// Pins returns the integrity.PinStore in the database.
func (db *PG) Pins() integrity.PinStore { return &pgPins{db} }

type pgPins struct{ db *PG }

// UpdatePins reads every pin in one transaction, holding the pins
// counter's row lock so that processes editing the pins at once take
// turns, lets change edit them, and writes what change added, changed or
// removed.
func (s *pgPins) UpdatePins(change func(integrity.Pins) bool) error {
	ctx, cancel := s.db.noCtx()
	defer cancel()
	err := s.db.write(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT n FROM counters WHERE name = 'pins' FOR UPDATE`); err != nil {
			return err
		}
		before, err := pgReadPins(ctx, tx)
		if err != nil {
			return err
		}
		after := before.Clone()
		if !change(after) {
			return nil
		}
		for up, tools := range before {
			for tool := range tools {
				if _, ok := after[up][tool]; !ok {
					if _, err := tx.Exec(ctx, `DELETE FROM pins WHERE upstream = $1 AND tool = $2`, up, tool); err != nil {
						return err
					}
				}
			}
		}
		for up, tools := range after {
			for tool, r := range tools {
				if old, ok := before[up][tool]; ok && old.Equal(r) {
					continue
				}
				if err := pgPutPin(ctx, tx, up, tool, r); err != nil {
					return err
				}
			}
		}
		return pgBump(ctx, tx, "pins")
	})
	if err != nil {
		return fmt.Errorf("pins in %s: %w", s.db.name, err)
	}
	return nil
}

func pgReadPins(ctx context.Context, tx pgx.Tx) (integrity.Pins, error) {
	rows, err := tx.Query(ctx, selectPins)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return readPinRows(rows)
}

func pgPutPin(ctx context.Context, tx pgx.Tx, up, tool string, r integrity.Record) error {
	_, err := tx.Exec(ctx, `INSERT INTO pins (`+pinColumns+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
		ON CONFLICT (upstream, tool) DO UPDATE SET hash = EXCLUDED.hash, first_seen = EXCLUDED.first_seen,
		approved_at = EXCLUDED.approved_at, description_excerpt = EXCLUDED.description_excerpt,
		pending_hash = EXCLUDED.pending_hash, changed_at = EXCLUDED.changed_at,
		pending_excerpt = EXCLUDED.pending_excerpt, held = EXCLUDED.held,
		contract = EXCLUDED.contract, pending_contract = EXCLUDED.pending_contract, gone_since = EXCLUDED.gone_since`,
		up, tool, r.Hash, nanos(r.FirstSeen), nanos(r.ApprovedAt), r.DescriptionExcerpt,
		r.PendingHash, nanos(r.ChangedAt), r.PendingExcerpt, r.Held, r.Contract, r.PendingContract, nanos(r.GoneSince))
	return err
}

// Vectors returns the routing.VectorStore in the database.
func (db *PG) Vectors() routing.VectorStore { return &pgVectors{db} }

type pgVectors struct{ db *PG }

func (s *pgVectors) LoadVectors(model string) (map[vecKey][]float32, error) {
	ctx, cancel := s.db.noCtx()
	defer cancel()
	rows, err := s.db.pool.Query(ctx, `SELECT key, vec FROM vectors WHERE model = $1`, model)
	if err != nil {
		return nil, fmt.Errorf("reading vectors of %s from %s: %w", model, s.db.name, err)
	}
	defer rows.Close()
	out := map[vecKey][]float32{}
	for rows.Next() {
		var k, v []byte
		if err := rows.Scan(&k, &v); err != nil {
			return nil, fmt.Errorf("reading vectors of %s from %s: %w", model, s.db.name, err)
		}
		if len(k) != len(vecKey{}) || len(v)%4 != 0 {
			continue // not written by this package; the model re-embeds it
		}
		out[vecKey(k)] = decodeVec(v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading vectors of %s from %s: %w", model, s.db.name, err)
	}
	return out, nil
}

func (s *pgVectors) SaveVectors(model string, vecs map[vecKey][]float32) error {
	if len(vecs) == 0 {
		return nil
	}
	ctx, cancel := s.db.noCtx()
	defer cancel()
	err := s.db.write(ctx, func(tx pgx.Tx) error {
		var dims int
		for _, v := range vecs {
			dims = len(v)
			break
		}
		if _, err := tx.Exec(ctx, `DELETE FROM vectors WHERE model = $1 AND octet_length(vec) != $2`, model, 4*dims); err != nil {
			return err
		}
		var b pgx.Batch
		for k, v := range vecs {
			b.Queue(`INSERT INTO vectors (model, key, vec) VALUES ($1, $2, $3)
				ON CONFLICT (model, key) DO UPDATE SET vec = EXCLUDED.vec`, model, k[:], encodeVec(v))
		}
		return tx.SendBatch(ctx, &b).Close()
	})
	if err != nil {
		return fmt.Errorf("saving %d vectors of %s in %s: %w", len(vecs), model, s.db.name, err)
	}
	return nil
}

// Gateways returns the Registry in the database.
func (db *PG) Gateways() Registry { return &pgGateways{db} }

type pgGateways struct{ db *PG }

// shared: replicas on other machines register here too.
func (s *pgGateways) shared() bool { return true }

func (s *pgGateways) Beat(ctx context.Context, g Gateway) error {
	if err := checkGateway(g); err != nil {
		return err
	}
	_, err := s.db.pool.Exec(ctx, `INSERT INTO gateways (`+gatewayColumns+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
		ON CONFLICT (id) DO UPDATE SET pid = EXCLUDED.pid, started = EXCLUDED.started,
		profile = EXCLUDED.profile, config = EXCLUDED.config, transport = EXCLUDED.transport,
		addr = EXCLUDED.addr, version = EXCLUDED.version, heartbeat = EXCLUDED.heartbeat,
		snapshot = EXCLUDED.snapshot`,
		g.ID, g.PID, nanos(g.Started), g.Profile, g.Config, g.Transport, g.Addr, g.Version,
		nanos(g.Heartbeat), string(g.Snapshot))
	if err != nil {
		return fmt.Errorf("registering gateway %s in %s: %w", g.ID, s.db.name, err)
	}
	return nil
}

func (s *pgGateways) Remove(ctx context.Context, ids ...string) error {
	if len(ids) == 0 {
		return nil
	}
	if _, err := s.db.pool.Exec(ctx, `DELETE FROM gateways WHERE id = ANY($1)`, ids); err != nil {
		return fmt.Errorf("removing gateways from %s: %w", s.db.name, err)
	}
	return nil
}

func (s *pgGateways) Gateways(ctx context.Context) ([]Gateway, error) {
	rows, err := s.db.pool.Query(ctx, selectGateways)
	if err != nil {
		return nil, fmt.Errorf("reading gateways from %s: %w", s.db.name, err)
	}
	defer rows.Close()
	out, err := readGateways(rows)
	if err != nil {
		return nil, fmt.Errorf("reading gateways from %s: %w", s.db.name, err)
	}
	return out, nil
}
