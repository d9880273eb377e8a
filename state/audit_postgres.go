package state

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/mcp-router/mcp-router/audit"
)

// Audit returns the audit.Store in the database.
func (db *PG) Audit() audit.Store { return &pgAudit{db: db, max: audit.MaxRows} }

type pgAudit struct {
	db  *PG
	max int // rows kept
}

func (s *pgAudit) Append(ctx context.Context, recs []audit.Record) error {
	if len(recs) == 0 {
		return nil
	}
	err := s.db.write(ctx, func(tx pgx.Tx) error {
		rows := make([][]any, len(recs))
		for i, r := range recs {
			rows[i] = []any{nanos(r.Time), r.Principal, r.Session, r.Tool, r.Upstream, r.Plan, r.Step,
				r.Outcome, int64(r.Duration), int64(r.RequestBytes), int64(r.ResponseBytes), r.Approval, r.Approver}
		}
		_, err := tx.CopyFrom(ctx, pgx.Identifier{"audit"}, strings.Split(auditColumns, ", "), pgx.CopyFromRows(rows))
		if err != nil {
			return err
		}
		// Ids only grow and only the oldest rows go, so the newest max
		// rows are those above the last id less max.
		_, err = tx.Exec(ctx, `DELETE FROM audit WHERE id <= (SELECT MAX(id) FROM audit) - $1`, int64(s.max))
		return err
	})
	if err != nil {
		return fmt.Errorf("appending %d audit records to %s: %w", len(recs), s.db.name, err)
	}
	return nil
}

func (s *pgAudit) Query(ctx context.Context, f audit.Filter) ([]audit.Record, error) {
	q := `SELECT ` + auditColumns + ` FROM audit WHERE at >= $1`
	args := []any{nanos(f.Since)}
	if f.Tool != "" {
		args = append(args, f.Tool)
		q += ` AND tool = $` + strconv.Itoa(len(args))
	}
	if f.Principal != "" {
		args = append(args, f.Principal)
		q += ` AND principal = $` + strconv.Itoa(len(args))
	}
	args = append(args, limitOf(f))
	q += ` ORDER BY id DESC LIMIT $` + strconv.Itoa(len(args))
	rows, err := s.db.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("reading audit records from %s: %w", s.db.name, err)
	}
	defer rows.Close()
	out, err := readAudit(rows)
	if err != nil {
		return nil, fmt.Errorf("reading audit records from %s: %w", s.db.name, err)
	}
	slices.Reverse(out)
	return out, nil
}
