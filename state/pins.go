package state

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/mcp-router/mcp-router/proxy/integrity"
)

// Pins returns the integrity.PinStore in the database.
func (db *DB) Pins() integrity.PinStore { return &sqlPins{db} }

type sqlPins struct{ db *DB }

var _ integrity.UpstreamPinStore = (*sqlPins)(nil)

// UpdatePins reads every pin in one write transaction, lets change edit
// them, and writes the pins change added, changed or removed.
func (s *sqlPins) UpdatePins(change func(integrity.Pins) bool) error {
	return s.update(nil, change)
}

// UpdateUpstreamPins is UpdatePins over the pins of upstreams only.
func (s *sqlPins) UpdateUpstreamPins(upstreams []string, change func(integrity.Pins) bool) error {
	if upstreams == nil {
		upstreams = []string{}
	}
	return s.update(upstreams, change)
}

// update is UpdatePins over the pins of upstreams, or every pin when
// upstreams is nil.
func (s *sqlPins) update(upstreams []string, change func(integrity.Pins) bool) error {
	ctx := context.Background() // the PinStore interface has no context: its callers (the hub's vetting) have none
	err := s.db.write(ctx, func(tx *sql.Tx) error {
		before, err := readPins(ctx, tx, upstreams)
		if err != nil {
			return err
		}
		after := before.Clone()
		if !change(after) {
			return nil
		}
		return writePinChanges(ctx, tx, before, after)
	})
	if err != nil {
		return fmt.Errorf("pins in %s: %w", s.db.path, err)
	}
	return nil
}

// readPins reads the pins of upstreams, or every pin when upstreams is nil.
func readPins(ctx context.Context, tx *sql.Tx, upstreams []string) (integrity.Pins, error) {
	query, args := selectPins, []any{}
	if upstreams != nil {
		if len(upstreams) == 0 {
			return integrity.Pins{}, nil
		}
		query += ` WHERE upstream IN (?` + strings.Repeat(`, ?`, len(upstreams)-1) + `)`
		for _, u := range upstreams {
			args = append(args, u)
		}
	}
	rows, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return readPinRows(rows)
}

// writePinChanges writes what differs between before and after, and
// counts the change.
func writePinChanges(ctx context.Context, tx *sql.Tx, before, after integrity.Pins) error {
	for up, tools := range before {
		for tool := range tools {
			if _, ok := after[up][tool]; !ok {
				if _, err := tx.ExecContext(ctx, `DELETE FROM pins WHERE upstream = ? AND tool = ?`, up, tool); err != nil {
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
			if err := putPin(ctx, tx, up, tool, r); err != nil {
				return err
			}
		}
	}
	return bump(ctx, tx, "pins")
}

// putPin writes one pin, replacing the one it had.
func putPin(ctx context.Context, tx *sql.Tx, up, tool string, r integrity.Record) error {
	_, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO pins (`+pinColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		up, tool, r.Hash, nanos(r.FirstSeen), nanos(r.ApprovedAt), r.DescriptionExcerpt,
		r.PendingHash, nanos(r.ChangedAt), r.PendingExcerpt, r.Held, r.Contract, r.PendingContract, nanos(r.GoneSince))
	return err
}
