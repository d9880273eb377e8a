package state

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mcp-router/mcp-router/proxy/integrity"
	"github.com/mcp-router/mcp-router/routing/lessons"
)

// rows is what *sql.Rows and pgx.Rows share: both backends read their
// query results through the scanners below, one per table.
type rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
}

const (
	pinColumns = `upstream, tool, hash, first_seen, approved_at, description_excerpt,
		pending_hash, changed_at, pending_excerpt, held, contract, pending_contract, gone_since`
	gatewayColumns = `id, pid, started, profile, config, transport, addr, version, heartbeat, snapshot`
	auditColumns   = `at, principal, session, tool, upstream, plan, step, outcome, duration_ns, request_bytes, response_bytes, approval, approver`
)

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

// scanLesson reads a row of lessonColumns.
func scanLesson(r rows) (l lessons.Lesson, err error) {
	var pol int
	var created, used int64
	err = r.Scan(&l.ID, &l.Query, &l.Tool, &pol, &l.Source, &l.Note, &created, &used, &l.Uses, &l.Principal)
	l.Polarity, l.Created, l.LastUsed = lessons.Polarity(pol), fromNanos(created), fromNanos(used)
	return l, err
}

// scanGateway reads a row of gatewayColumns.
func scanGateway(r rows) (g Gateway, err error) {
	var started, beat int64
	var snap string
	err = r.Scan(&g.ID, &g.PID, &started, &g.Profile, &g.Config, &g.Transport, &g.Addr, &g.Version, &beat, &snap)
	g.Started, g.Heartbeat = fromNanos(started), fromNanos(beat)
	if snap != "" {
		g.Snapshot = json.RawMessage(snap)
	}
	return g, err
}

// readPinRows reads rows of pinColumns.
func readPinRows(r rows) (integrity.Pins, error) {
	set := integrity.Pins{}
	for r.Next() {
		var up, tool string
		var rec integrity.Record
		var first, approved, changed, gone int64
		if err := r.Scan(&up, &tool, &rec.Hash, &first, &approved, &rec.DescriptionExcerpt,
			&rec.PendingHash, &changed, &rec.PendingExcerpt, &rec.Held, &rec.Contract, &rec.PendingContract, &gone); err != nil {
			return nil, err
		}
		rec.FirstSeen, rec.ApprovedAt, rec.ChangedAt = fromNanos(first), fromNanos(approved), fromNanos(changed)
		rec.GoneSince = fromNanos(gone)
		if set[up] == nil {
			set[up] = map[string]integrity.Record{}
		}
		set[up][tool] = rec
	}
	return set, r.Err()
}
