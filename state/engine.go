package state

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// engine is what the stores need of a database, so that one store serves
// state.db and PostgreSQL alike: queries use ? placeholders and the SQL
// both read; where they differ, the store asks pg.
type engine struct {
	name string // the file, or the URL without its password, for messages
	pg   bool   // PostgreSQL: shared by machines, with its own dialect
	// timeout bounds the calls of the interfaces that take no context
	// (pins, vectors); 0: unbounded.
	timeout time.Duration
	conn    conn                                                 // outside a transaction
	write   func(ctx context.Context, fn func(conn) error) error // in a write transaction
}

// conn runs queries, in a transaction or out of one.
type conn interface {
	// exec runs q and returns the rows it changed.
	exec(ctx context.Context, q string, args ...any) (int64, error)
	query(ctx context.Context, q string, args ...any) (rows, error)
	// one scans the first row of q into dest, or reports false.
	one(ctx context.Context, q string, args []any, dest ...any) (bool, error)
	// insert adds rows of cols to table: COPY in PostgreSQL, which costs
	// its client about half the CPU of a multi-row INSERT
	// (BenchmarkAuditAppend), and INSERTs of insertRows rows in state.db.
	insert(ctx context.Context, table string, cols []string, rows [][]any) error
}

// insertRows is how many rows one INSERT in state.db writes: 256 of the
// widest table's 13 columns keep within SQLite's parameter limit.
const insertRows = 256

// noCtx is the context of a call whose interface has none, bounded so
// that an unreachable database cannot hang it.
func (b engine) noCtx() (context.Context, context.CancelFunc) {
	if b.timeout <= 0 {
		return context.Background(), func() {}
	}
	return context.WithTimeout(context.Background(), b.timeout)
}

// greatest is the SQL function of the larger of two values.
func (b engine) greatest() string {
	if b.pg {
		return "GREATEST"
	}
	return "max"
}

// migrate brings the schema to the latest of steps (steps[i] takes it
// from version i to i+1) in one write transaction, after lock (if any);
// log (if any) hears of each step.
func (b engine) migrate(ctx context.Context, steps []string, lock string, log *slog.Logger) error {
	return b.write(ctx, func(c conn) error {
		if lock != "" {
			if _, err := c.exec(ctx, lock); err != nil {
				return err
			}
		}
		if _, err := c.exec(ctx, `CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)`); err != nil {
			return err
		}
		var v int
		ok, err := c.one(ctx, `SELECT version FROM schema_version`, nil, &v)
		if err == nil && !ok {
			_, err = c.exec(ctx, `INSERT INTO schema_version (version) VALUES (0)`)
		}
		if err != nil {
			return err
		}
		if v > len(steps) {
			return fmt.Errorf("schema version %d is newer than this mcp-router knows (%d)", v, len(steps))
		}
		for i := v; i < len(steps); i++ {
			if _, err := c.exec(ctx, steps[i]); err != nil {
				return fmt.Errorf("migrating schema to version %d: %w", i+1, err)
			}
			if log != nil {
				log.Info("state schema migrated", "db", b.name, "version", i+1)
			}
		}
		if v < len(steps) {
			_, err := c.exec(ctx, `UPDATE schema_version SET version = ?`, len(steps))
			return err
		}
		return nil
	})
}

// wrap is err, or nil, after what was being done ("clearing lessons in")
// and the database's name.
func (b engine) wrap(err error, doing string, args ...any) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s %s: %w", fmt.Sprintf(doing, args...), b.name, err)
}

// bump counts a change of what counter names.
func bump(ctx context.Context, c conn, counter string) error {
	_, err := c.exec(ctx, `UPDATE counters SET n = n + 1 WHERE name = ?`, counter)
	return err
}

// placeholders is n ? placeholders, comma-separated.
func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}

// valueRows is the VALUES list of a multi-row INSERT: rows rows of cols
// placeholders each.
func valueRows(rows, cols int) string {
	return strings.Join(slices.Repeat([]string{"(" + placeholders(cols) + ")"}, rows), ", ")
}

// stores are the stores of one database, the same for state.db and
// PostgreSQL: DB and PG embed them.
type stores struct{ b engine }

// Path returns the database file's path, or its URL without the password.
func (s stores) Path() string { return s.b.name }

func (db *DB) engine() engine {
	return engine{name: db.path, conn: sqlConn{db.db}, write: func(ctx context.Context, fn func(conn) error) error {
		return db.write(ctx, func(tx *sql.Tx) error { return fn(sqlConn{tx}) })
	}}
}

func (db *PG) engine() engine {
	return engine{name: db.name, pg: true, timeout: db.timeout, conn: pgConn{db.pool}, write: func(ctx context.Context, fn func(conn) error) error {
		return pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error { return fn(pgConn{tx}) })
	}}
}

// sqlConn runs queries through database/sql (*sql.DB or *sql.Tx).
type sqlConn struct {
	q interface {
		ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error)
		QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error)
		QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row
	}
}

func (c sqlConn) exec(ctx context.Context, q string, args ...any) (int64, error) {
	res, err := c.q.ExecContext(ctx, q, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func (c sqlConn) query(ctx context.Context, q string, args ...any) (rows, error) {
	r, err := c.q.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	return sqlRows{r}, nil
}

func (c sqlConn) one(ctx context.Context, q string, args []any, dest ...any) (bool, error) {
	err := c.q.QueryRowContext(ctx, q, args...).Scan(dest...)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

func (c sqlConn) insert(ctx context.Context, table string, cols []string, rows [][]any) error {
	for chunk := range slices.Chunk(rows, insertRows) {
		q := "INSERT INTO " + table + " (" + strings.Join(cols, ", ") + ") VALUES " + valueRows(len(chunk), len(cols))
		if _, err := c.exec(ctx, q, slices.Concat(chunk...)...); err != nil {
			return err
		}
	}
	return nil
}

type sqlRows struct{ *sql.Rows }

func (r sqlRows) Close() { r.Rows.Close() }

// pgConn runs queries through pgx, numbering the placeholders.
type pgConn struct {
	q interface {
		Exec(ctx context.Context, q string, args ...any) (pgconn.CommandTag, error)
		Query(ctx context.Context, q string, args ...any) (pgx.Rows, error)
		QueryRow(ctx context.Context, q string, args ...any) pgx.Row
		CopyFrom(ctx context.Context, table pgx.Identifier, cols []string, src pgx.CopyFromSource) (int64, error)
	}
}

func (c pgConn) insert(ctx context.Context, table string, cols []string, rows [][]any) error {
	_, err := c.q.CopyFrom(ctx, pgx.Identifier{table}, cols, pgx.CopyFromRows(rows))
	return err
}

func (c pgConn) exec(ctx context.Context, q string, args ...any) (int64, error) {
	tag, err := c.q.Exec(ctx, numbered(q), args...)
	return tag.RowsAffected(), err
}

func (c pgConn) query(ctx context.Context, q string, args ...any) (rows, error) {
	return c.q.Query(ctx, numbered(q), args...)
}

func (c pgConn) one(ctx context.Context, q string, args []any, dest ...any) (bool, error) {
	err := c.q.QueryRow(ctx, numbered(q), args...).Scan(dest...)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

// numbered turns the ? placeholders of q into $1, $2, ... (the queries
// here hold no ? of their own).
func numbered(q string) string {
	parts := strings.Split(q, "?")
	var b strings.Builder
	for i, p := range parts {
		if i > 0 {
			b.WriteString("$" + strconv.Itoa(i))
		}
		b.WriteString(p)
	}
	return b.String()
}

// rows is what *sql.Rows (as sqlRows) and pgx.Rows share: both backends
// read query results through it.
type rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close()
}

// queryAll runs q and reads each of its rows with scan; errors name what
// was read and the database.
func queryAll[T any](ctx context.Context, b engine, what string, scan func(rows) (T, error), q string, args ...any) ([]T, error) {
	out, err := func() ([]T, error) {
		r, err := b.conn.query(ctx, q, args...)
		if err != nil {
			return nil, err
		}
		defer r.Close()
		var out []T
		for r.Next() {
			v, err := scan(r)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, r.Err()
	}()
	if err != nil {
		return nil, fmt.Errorf("reading %s from %s: %w", what, b.name, err)
	}
	return out, nil
}
