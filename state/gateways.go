package state

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"
)

// Gateway is one running `mcp-router serve` as it registered itself.
type Gateway struct {
	ID        string    `json:"id"`
	PID       int       `json:"pid"`
	Started   time.Time `json:"started"`
	Profile   string    `json:"profile"`
	Config    string    `json:"config"`
	Transport string    `json:"transport"` // stdio or http
	Addr      string    `json:"addr,omitempty"`
	Version   string    `json:"version"`
	// Heartbeat is when the gateway last wrote its row.
	Heartbeat time.Time `json:"heartbeat"`
	// Snapshot is the gateway's own JSON account of its upstreams and
	// calls, at most MaxSnapshot bytes.
	Snapshot json.RawMessage `json:"snapshot,omitempty"`
}

// MaxSnapshot bounds Gateway.Snapshot.
const MaxSnapshot = 64 << 10

// Registry is where running gateways register and are found.
type Registry interface {
	// Beat inserts or replaces g's row.
	Beat(ctx context.Context, g Gateway) error
	// Remove deletes the rows of ids; unknown ids are no error.
	Remove(ctx context.Context, ids ...string) error
	// Gateways returns every row, oldest start first.
	Gateways(ctx context.Context) ([]Gateway, error)
}

// Shared reports whether r is shared by several machines, so that a
// row's PID may be another machine's process.
func Shared(r Registry) bool {
	s, ok := r.(interface{ shared() bool })
	return ok && s.shared()
}

func checkGateway(g Gateway) error {
	switch {
	case g.ID == "":
		return fmt.Errorf("gateway without an ID")
	case len(g.Snapshot) > MaxSnapshot:
		return fmt.Errorf("gateway %s: snapshot of %d bytes, more than %d", g.ID, len(g.Snapshot), MaxSnapshot)
	}
	return nil
}

// Gateways returns the Registry in the database.
func (db *DB) Gateways() Registry { return &sqlGateways{db} }

type sqlGateways struct{ db *DB }

func (s *sqlGateways) Beat(ctx context.Context, g Gateway) error {
	if err := checkGateway(g); err != nil {
		return err
	}
	err := s.db.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO gateways (`+gatewayColumns+`)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			g.ID, g.PID, nanos(g.Started), g.Profile, g.Config, g.Transport, g.Addr, g.Version,
			nanos(g.Heartbeat), string(g.Snapshot))
		return err
	})
	if err != nil {
		return fmt.Errorf("registering gateway %s in %s: %w", g.ID, s.db.path, err)
	}
	return nil
}

func (s *sqlGateways) Remove(ctx context.Context, ids ...string) error {
	if len(ids) == 0 {
		return nil
	}
	err := s.db.write(ctx, func(tx *sql.Tx) error {
		for _, id := range ids {
			if _, err := tx.ExecContext(ctx, `DELETE FROM gateways WHERE id = ?`, id); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("removing gateways from %s: %w", s.db.path, err)
	}
	return nil
}

func (s *sqlGateways) Gateways(ctx context.Context) ([]Gateway, error) {
	rows, err := s.db.db.QueryContext(ctx, selectGateways)
	if err != nil {
		return nil, fmt.Errorf("reading gateways from %s: %w", s.db.path, err)
	}
	defer rows.Close()
	out, err := readGateways(rows)
	if err != nil {
		return nil, fmt.Errorf("reading gateways from %s: %w", s.db.path, err)
	}
	return out, nil
}
