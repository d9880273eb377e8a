package state

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// EndedSessions records the HTTP sessions a client ended (DELETE) on any
// gateway sharing the state, so that no other replica resumes them from
// their sealed ids. A session is named by a hash of its id, never by the
// id itself (which is a bearer of the session). A record is kept until
// the id could no longer be resumed anyway, and expired records are
// pruned on each write, so the table holds the sessions ended within
// that time at most.
type EndedSessions interface {
	// End records the session hashed to key as ended until until, and
	// drops the records expired at now.
	End(ctx context.Context, key [32]byte, until, now time.Time) error
	// Ended reports whether the session hashed to key is recorded as
	// ended and the record has not expired at now.
	Ended(ctx context.Context, key [32]byte, now time.Time) (bool, error)
}

var (
	_ EndedSessions = (*sqlEnded)(nil)
	_ EndedSessions = (*pgEnded)(nil)
	_ EndedSessions = memEnded{}
)

// maxEndedMemory bounds the records held in memory: past it, the ones
// closest to their expiry go first. A database holds them all until they
// expire.
const maxEndedMemory = 100_000

// EndedSessions returns the ended sessions in state.db.
func (db *DB) EndedSessions() EndedSessions { return &sqlEnded{db} }

type sqlEnded struct{ db *DB }

func (s *sqlEnded) End(ctx context.Context, key [32]byte, until, now time.Time) error {
	tx, err := s.db.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("recording an ended session in %s: %w", s.db.path, err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `DELETE FROM ended_sessions WHERE expires <= ?`, now.UnixNano()); err != nil {
		return fmt.Errorf("pruning the ended sessions in %s: %w", s.db.path, err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO ended_sessions (key, expires) VALUES (?, ?)
		ON CONFLICT (key) DO UPDATE SET expires = max(expires, excluded.expires)`, key[:], until.UnixNano()); err != nil {
		return fmt.Errorf("recording an ended session in %s: %w", s.db.path, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("recording an ended session in %s: %w", s.db.path, err)
	}
	return nil
}

func (s *sqlEnded) Ended(ctx context.Context, key [32]byte, now time.Time) (bool, error) {
	var one int
	err := s.db.db.QueryRowContext(ctx, `SELECT 1 FROM ended_sessions WHERE key = ? AND expires > ?`, key[:], now.UnixNano()).Scan(&one)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("looking up an ended session in %s: %w", s.db.path, err)
	}
	return true, nil
}

// EndedSessions returns the ended sessions in the database.
func (db *PG) EndedSessions() EndedSessions { return &pgEnded{db} }

type pgEnded struct{ db *PG }

func (s *pgEnded) End(ctx context.Context, key [32]byte, until, now time.Time) error {
	err := s.db.write(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `DELETE FROM ended_sessions WHERE expires <= $1`, now.UnixNano()); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO ended_sessions (key, expires) VALUES ($1, $2)
			ON CONFLICT (key) DO UPDATE SET expires = GREATEST(ended_sessions.expires, excluded.expires)`, key[:], until.UnixNano())
		return err
	})
	if err != nil {
		return fmt.Errorf("recording an ended session in %s: %w", s.db.name, err)
	}
	return nil
}

func (s *pgEnded) Ended(ctx context.Context, key [32]byte, now time.Time) (bool, error) {
	var one int
	err := s.db.pool.QueryRow(ctx, `SELECT 1 FROM ended_sessions WHERE key = $1 AND expires > $2`, key[:], now.UnixNano()).Scan(&one)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("looking up an ended session in %s: %w", s.db.name, err)
	}
	return true, nil
}

// EndedSessions returns the ended sessions in memory.
func (m *Memory) EndedSessions() EndedSessions { return memEnded{m} }

type memEnded struct{ m *Memory }

func (s memEnded) End(ctx context.Context, key [32]byte, until, now time.Time) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.m.mu.Lock()
	defer s.m.mu.Unlock()
	if s.m.ended == nil {
		s.m.ended = map[[32]byte]time.Time{}
	}
	for k, u := range s.m.ended {
		if !u.After(now) {
			delete(s.m.ended, k)
		}
	}
	for len(s.m.ended) >= maxEndedMemory { // rare: as many sessions ended within a day
		var first [32]byte
		var soonest time.Time
		for k, u := range s.m.ended {
			if soonest.IsZero() || u.Before(soonest) {
				first, soonest = k, u
			}
		}
		delete(s.m.ended, first)
	}
	if u, ok := s.m.ended[key]; !ok || until.After(u) {
		s.m.ended[key] = until
	}
	return nil
}

func (s memEnded) Ended(ctx context.Context, key [32]byte, now time.Time) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	s.m.mu.Lock()
	defer s.m.mu.Unlock()
	u, ok := s.m.ended[key]
	return ok && u.After(now), nil
}
