package state

import (
	"context"
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

// Gateways returns the Registry in the database.
func (s stores) Gateways() Registry { return gatewayStore(s) }

type gatewayStore struct{ b engine }

// shared: in PostgreSQL, replicas on other machines register too.
func (s gatewayStore) shared() bool { return s.b.pg }

func (s gatewayStore) Beat(ctx context.Context, g Gateway) error {
	switch {
	case g.ID == "":
		return fmt.Errorf("gateway without an ID")
	case len(g.Snapshot) > MaxSnapshot:
		return fmt.Errorf("gateway %s: snapshot of %d bytes, more than %d", g.ID, len(g.Snapshot), MaxSnapshot)
	}
	_, err := s.b.conn.exec(ctx, `INSERT INTO gateways (`+gatewayColumns+`) VALUES (`+placeholders(10)+`)
		ON CONFLICT (id) DO UPDATE SET pid = excluded.pid, started = excluded.started,
		profile = excluded.profile, config = excluded.config, transport = excluded.transport,
		addr = excluded.addr, version = excluded.version, heartbeat = excluded.heartbeat,
		snapshot = excluded.snapshot`,
		g.ID, g.PID, nanos(g.Started), g.Profile, g.Config, g.Transport, g.Addr, g.Version,
		nanos(g.Heartbeat), string(g.Snapshot))
	return s.b.wrap(err, "registering gateway %s in", g.ID)
}

func (s gatewayStore) Remove(ctx context.Context, ids ...string) error {
	if len(ids) == 0 {
		return nil
	}
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	_, err := s.b.conn.exec(ctx, `DELETE FROM gateways WHERE id IN (`+placeholders(len(ids))+`)`, args...)
	return s.b.wrap(err, "removing gateways from")
}

func (s gatewayStore) Gateways(ctx context.Context) ([]Gateway, error) {
	return queryAll(ctx, s.b, "gateways", scanGateway, `SELECT `+gatewayColumns+` FROM gateways ORDER BY started, id`)
}

const gatewayColumns = `id, pid, started, profile, config, transport, addr, version, heartbeat, snapshot`

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
