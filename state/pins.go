package state

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/mcp-router/mcp-router/proxy/integrity"
)

// Pins returns the integrity.PinStore in the database.
func (db *DB) Pins() integrity.PinStore { return &sqlPins{db} }

type sqlPins struct{ db *DB }

// UpdatePins reads every pin in one write transaction, lets change edit
// them, and writes the pins change added, changed or removed.
func (s *sqlPins) UpdatePins(change func(integrity.Pins) bool) error {
	ctx := context.Background() // the PinStore interface has no context: its callers (the hub's vetting) have none
	err := s.db.write(ctx, func(tx *sql.Tx) error {
		before, err := readPins(ctx, tx)
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

func readPins(ctx context.Context, tx *sql.Tx) (integrity.Pins, error) {
	rows, err := tx.QueryContext(ctx, selectPins)
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
