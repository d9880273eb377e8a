package state

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/mcp-router/mcp-router/audit"
)

// Audit returns the audit.Store in the database.
func (s stores) Audit() audit.Store { return auditStore{b: s.b, max: audit.MaxRows} }

type auditStore struct {
	b   engine
	max int // rows kept
}

func (s auditStore) Append(ctx context.Context, recs []audit.Record) error {
	if len(recs) == 0 {
		return nil
	}
	rows := make([][]any, len(recs))
	for i, r := range recs {
		rows[i] = []any{nanos(r.Time), r.Principal, r.Session, r.Tool, r.Upstream, r.Plan, r.Step,
			r.Outcome, int64(r.Duration), int64(r.RequestBytes), int64(r.ResponseBytes), r.Approval, r.Approver}
	}
	err := s.b.write(ctx, func(c conn) error {
		if err := c.insert(ctx, "audit", strings.Split(auditColumns, ", "), rows); err != nil {
			return err
		}
		// Ids only grow and only the oldest rows go, so the newest max
		// rows are those above the last id less max.
		_, err := c.exec(ctx, `DELETE FROM audit WHERE id <= (SELECT MAX(id) FROM audit) - ?`, s.max)
		return err
	})
	return s.b.wrap(err, "appending %d audit records to", len(recs))
}

func (s auditStore) Query(ctx context.Context, f audit.Filter) ([]audit.Record, error) {
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
	limit := f.Limit
	if limit <= 0 {
		limit = audit.DefaultLimit
	}
	out, err := queryAll(ctx, s.b, "audit records", scanAudit, q+` ORDER BY id DESC LIMIT ?`, append(args, limit)...)
	slices.Reverse(out)
	return out, err
}

// scanAudit reads a row of auditColumns.
func scanAudit(r rows) (rec audit.Record, err error) {
	var at, dur, req, resp int64
	err = r.Scan(&at, &rec.Principal, &rec.Session, &rec.Tool, &rec.Upstream, &rec.Plan, &rec.Step, &rec.Outcome,
		&dur, &req, &resp, &rec.Approval, &rec.Approver)
	rec.Time, rec.Duration = fromNanos(at), time.Duration(dur)
	rec.RequestBytes, rec.ResponseBytes = int(req), int(resp)
	return rec, err
}

const auditColumns = `at, principal, session, tool, upstream, plan, step, outcome, duration_ns, request_bytes, response_bytes, approval, approver`
