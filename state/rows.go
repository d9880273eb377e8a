package state

import (
	"encoding/json"
	"time"

	"github.com/mcp-router/mcp-router/audit"
	"github.com/mcp-router/mcp-router/proxy/integrity"
	"github.com/mcp-router/mcp-router/routing/lessons"
)

// rows is what *sql.Rows and pgx.Rows share: both backends read their
// query results through the readers below, one per table.
type rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
}

// The queries whose rows the readers read; placeholders differ between
// the backends, so queries with arguments build their own.
const (
	selectLessons  = `SELECT ` + lessonColumns + ` FROM lessons ORDER BY id`
	selectPins     = `SELECT ` + pinColumns + ` FROM pins`
	selectGateways = `SELECT ` + gatewayColumns + ` FROM gateways ORDER BY started, id`

	pinColumns = `upstream, tool, hash, first_seen, approved_at, description_excerpt,
		pending_hash, changed_at, pending_excerpt, held, contract, pending_contract, gone_since`
	gatewayColumns = `id, pid, started, profile, config, transport, addr, version, heartbeat, snapshot`
	auditColumns   = `at, principal, session, tool, upstream, plan, step, outcome, duration_ns, request_bytes, response_bytes, approval, approver`
)

// readLessons reads rows of lessonColumns.
func readLessons(r rows) ([]lessons.Lesson, error) {
	var out []lessons.Lesson
	for r.Next() {
		var l lessons.Lesson
		var pol int
		var created, used int64
		if err := r.Scan(&l.ID, &l.Query, &l.Tool, &pol, &l.Source, &l.Note, &created, &used, &l.Uses, &l.Principal); err != nil {
			return nil, err
		}
		l.Polarity, l.Created, l.LastUsed = lessons.Polarity(pol), fromNanos(created), fromNanos(used)
		out = append(out, l)
	}
	return out, r.Err()
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

// readGateways reads rows of gatewayColumns.
func readGateways(r rows) ([]Gateway, error) {
	var out []Gateway
	for r.Next() {
		var g Gateway
		var started, beat int64
		var snap string
		if err := r.Scan(&g.ID, &g.PID, &started, &g.Profile, &g.Config, &g.Transport, &g.Addr, &g.Version,
			&beat, &snap); err != nil {
			return nil, err
		}
		g.Started, g.Heartbeat = fromNanos(started), fromNanos(beat)
		if snap != "" {
			g.Snapshot = json.RawMessage(snap)
		}
		out = append(out, g)
	}
	return out, r.Err()
}

// readAudit reads rows of auditColumns.
func readAudit(r rows) ([]audit.Record, error) {
	var out []audit.Record
	for r.Next() {
		var rec audit.Record
		var at, dur, req, resp int64
		if err := r.Scan(&at, &rec.Principal, &rec.Session, &rec.Tool, &rec.Upstream, &rec.Plan, &rec.Step, &rec.Outcome,
			&dur, &req, &resp, &rec.Approval, &rec.Approver); err != nil {
			return nil, err
		}
		rec.Time, rec.Duration = fromNanos(at), time.Duration(dur)
		rec.RequestBytes, rec.ResponseBytes = int(req), int(resp)
		out = append(out, rec)
	}
	return out, r.Err()
}
