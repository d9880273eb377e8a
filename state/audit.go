package state

import (
	"context"
	"database/sql"
	"fmt"
	"slices"

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
		stmt, err := tx.PrepareContext(ctx, `INSERT INTO audit (`+auditColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
		if err != nil {
			return err
		}
		defer stmt.Close()
		for _, r := range recs {
			if _, err := stmt.ExecContext(ctx, nanos(r.Time), r.Principal, r.Session, r.Tool, r.Upstream, r.Plan, r.Step,
				r.Outcome, int64(r.Duration), r.RequestBytes, r.ResponseBytes, r.Approval, r.Approver); err != nil {
				return err
			}
		}
		// Ids are assigned in order and only the oldest rows go, so the
		// newest max rows are those above the last id less max.
		_, err = tx.ExecContext(ctx, `DELETE FROM audit WHERE id <= (SELECT MAX(id) FROM audit) - ?`, s.max)
		return err
	})
	if err != nil {
		return fmt.Errorf("appending %d audit records to %s: %w", len(recs), s.db.path, err)
	}
	return nil
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
