package state

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"

	"github.com/mcp-router/mcp-router/audit"
)

// Audit returns the audit.Store in the database.
func (db *DB) Audit() audit.Store { return &sqlAudit{db: db, max: audit.MaxRows} }

type sqlAudit struct {
	db  *DB
	max int // rows kept
}

func (s *sqlAudit) Append(ctx context.Context, recs []audit.Record) error {
	if len(recs) == 0 {
		return nil
	}
	err := s.db.write(ctx, func(tx *sql.Tx) error {
		for rest := recs; len(rest) > 0; {
			n := min(len(rest), auditRowsPerInsert)
			if _, err := tx.ExecContext(ctx, auditInsert(n), auditArgs(rest[:n])...); err != nil {
				return err
			}
			rest = rest[n:]
		}
		// Ids are assigned in order and only the oldest rows go, so the
		// newest max rows are those above the last id less max.
		_, err := tx.ExecContext(ctx, `DELETE FROM audit WHERE id <= (SELECT MAX(id) FROM audit) - ?`, s.max)
		return err
	})
	if err != nil {
		return fmt.Errorf("appending %d audit records to %s: %w", len(recs), s.db.path, err)
	}
	return nil
}

// auditRowsPerInsert is how many rows one INSERT statement adds: one
// statement of many rows costs SQLite about what one of one does, so a
// batch's rows go in a few statements (11 parameters a row, well under
// SQLite's limit of 32766).
const auditRowsPerInsert = 64

// auditInsert is the INSERT of n rows.
func auditInsert(n int) string {
	const row = "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
	return `INSERT INTO audit (` + auditColumns + `) VALUES ` + row + strings.Repeat(", "+row, n-1)
}

// auditArgs are the parameters of auditInsert(len(recs)).
func auditArgs(recs []audit.Record) []any {
	args := make([]any, 0, 11*len(recs))
	for _, r := range recs {
		args = append(args, nanos(r.Time), r.Principal, r.Session, r.Tool, r.Upstream, r.Plan, r.Step,
			r.Outcome, int64(r.Duration), r.RequestBytes, r.ResponseBytes)
	}
	return args
}

func (s *sqlAudit) Query(ctx context.Context, f audit.Filter) ([]audit.Record, error) {
	q := `SELECT ` + auditColumns + ` FROM audit WHERE at >= ?`
	args := []any{nanos(f.Since)}
	if f.Tool != "" {
		q += ` AND tool = ?`
		args = append(args, f.Tool)
	}
	if f.Principal != "" {
		q += ` AND principal = ?`
		args = append(args, f.Principal)
	}
	q += ` ORDER BY id DESC LIMIT ?`
	args = append(args, limitOf(f))
	rows, err := s.db.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("reading audit records from %s: %w", s.db.path, err)
	}
	defer rows.Close()
	out, err := readAudit(rows)
	if err != nil {
		return nil, fmt.Errorf("reading audit records from %s: %w", s.db.path, err)
	}
	slices.Reverse(out)
	return out, nil
}

func limitOf(f audit.Filter) int {
	if f.Limit <= 0 {
		return audit.DefaultLimit
	}
	return f.Limit
}
