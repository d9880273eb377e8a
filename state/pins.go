package state

import (
	"context"
	"slices"
	"strings"

	"github.com/mcp-router/mcp-router/proxy/integrity"
)

// Pins returns the integrity.PinStore in the database.
func (s stores) Pins() integrity.PinStore { return pinStore(s) }

type pinStore struct{ b engine }

var _ integrity.UpstreamPinStore = pinStore{}

// UpdatePins reads every pin in one write transaction, lets change edit
// them, and writes what it changed. In PostgreSQL it holds the pins
// counter's row lock, so that processes take turns.
func (s pinStore) UpdatePins(change func(integrity.Pins) bool) error {
	return s.update(nil, change)
}

// UpdateUpstreamPins is UpdatePins over the pins of upstreams only.
func (s pinStore) UpdateUpstreamPins(upstreams []string, change func(integrity.Pins) bool) error {
	if upstreams == nil {
		upstreams = []string{}
	}
	return s.update(upstreams, change)
}

// update is UpdatePins over the pins of upstreams (nil: all).
func (s pinStore) update(upstreams []string, change func(integrity.Pins) bool) error {
	ctx, cancel := s.b.noCtx() // the PinStore interface has no context: its callers (the hub's vetting) have none
	defer cancel()
	err := s.b.write(ctx, func(c conn) error {
		if s.b.pg {
			if _, err := c.exec(ctx, `SELECT n FROM counters WHERE name = 'pins' FOR UPDATE`); err != nil {
				return err
			}
		}
		before, err := readPins(ctx, c, upstreams)
		if err != nil {
			return err
		}
		after := before.Clone()
		if !change(after) {
			return nil
		}
		return writePinChanges(ctx, c, before, after)
	})
	return s.b.wrap(err, "pins in")
}

// readPins reads the pins of upstreams, or every pin when upstreams is nil.
func readPins(ctx context.Context, c conn, upstreams []string) (integrity.Pins, error) {
	query, args := `SELECT `+pinColumns+` FROM pins`, []any{}
	if upstreams != nil {
		if len(upstreams) == 0 {
			return integrity.Pins{}, nil
		}
		query += ` WHERE upstream IN (?` + strings.Repeat(`, ?`, len(upstreams)-1) + `)`
		for _, u := range upstreams {
			args = append(args, u)
		}
	}
	rows, err := c.query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return readPinRows(rows)
}

// pinsPerStatement is how many pins one INSERT writes, or one DELETE
// drops (13 parameters a pin, within both databases' limits).
const pinsPerStatement = 256

// writePinChanges writes what differs between before and after: the
// dropped pins in a DELETE per upstream and the new or changed ones in
// multi-row INSERTs, pinsPerStatement at a time.
func writePinChanges(ctx context.Context, c conn, before, after integrity.Pins) error {
	for up, tools := range before {
		var gone []any
		for tool := range tools {
			if _, ok := after[up][tool]; !ok {
				gone = append(gone, tool)
			}
		}
		for chunk := range slices.Chunk(gone, pinsPerStatement) {
			args := append([]any{up}, chunk...)
			if _, err := c.exec(ctx, `DELETE FROM pins WHERE upstream = ? AND tool IN (`+placeholders(len(chunk))+`)`, args...); err != nil {
				return err
			}
		}
	}
	var args []any
	for up, tools := range after {
		for tool, r := range tools {
			if old, ok := before[up][tool]; ok && old.Equal(r) {
				continue
			}
			args = append(args, up, tool, r.Hash, nanos(r.FirstSeen), nanos(r.ApprovedAt), r.DescriptionExcerpt,
				r.PendingHash, nanos(r.ChangedAt), r.PendingExcerpt, r.Held, r.Contract, r.PendingContract, nanos(r.GoneSince))
		}
	}
	for chunk := range slices.Chunk(args, 13*pinsPerStatement) {
		if err := putPins(ctx, c, chunk); err != nil {
			return err
		}
	}
	return bump(ctx, c, "pins")
}

// putPins writes the pins of args (13 a pin, in pinColumns' order),
// replacing those they had.
func putPins(ctx context.Context, c conn, args []any) error {
	rows := valueRows(len(args)/13, 13)
	_, err := c.exec(ctx, `INSERT INTO pins (`+pinColumns+`) VALUES `+rows+`
		ON CONFLICT (upstream, tool) DO UPDATE SET hash = excluded.hash, first_seen = excluded.first_seen,
		approved_at = excluded.approved_at, description_excerpt = excluded.description_excerpt,
		pending_hash = excluded.pending_hash, changed_at = excluded.changed_at,
		pending_excerpt = excluded.pending_excerpt, held = excluded.held,
		contract = excluded.contract, pending_contract = excluded.pending_contract, gone_since = excluded.gone_since`,
		args...)
	return err
}

const pinColumns = `upstream, tool, hash, first_seen, approved_at, description_excerpt,
	pending_hash, changed_at, pending_excerpt, held, contract, pending_contract, gone_since`

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
