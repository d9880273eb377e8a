package state

import (
	"context"
	"crypto/sha256"
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
// that time at most, and of those at most MaxEndedPerOwner of one owner
// (the principal whose sessions they were): a client ending sessions in a
// loop drops its own oldest records, never another's, and the table does
// not grow with its loop.
type EndedSessions interface {
	// End records the session hashed to key, of owner, as ended until
	// until, drops the records expired at now, and drops the owner's
	// records past its MaxEndedPerOwner newest.
	End(ctx context.Context, key [32]byte, owner string, until, now time.Time) error
	// Ended reports whether the session hashed to key is recorded as
	// ended and the record has not expired at now.
	Ended(ctx context.Context, key [32]byte, now time.Time) (bool, error)
}

var (
	_ EndedSessions = (*sqlEnded)(nil)
	_ EndedSessions = (*pgEnded)(nil)
)

// MaxEndedPerOwner bounds the ended-session records of one owner: past
// it, the owner's records closest to their expiry go first. The sessions
// they name could then be resumed by their own principal alone (a sealed
// id names it), which gains it nothing.
const MaxEndedPerOwner = 1000

// ownerKey is how a record names its owner: a hash, not the principal.
func ownerKey(owner string) []byte {
	sum := sha256.Sum256([]byte(owner))
	return sum[:16]
}

// EndedSessions returns the ended sessions in state.db.
func (db *DB) EndedSessions() EndedSessions { return &sqlEnded{db} }

type sqlEnded struct{ db *DB }

func (s *sqlEnded) End(ctx context.Context, key [32]byte, owner string, until, now time.Time) error {
	tx, err := s.db.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("recording an ended session in %s: %w", s.db.path, err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `DELETE FROM ended_sessions WHERE expires <= ?`, now.UnixNano()); err != nil {
		return fmt.Errorf("pruning the ended sessions in %s: %w", s.db.path, err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO ended_sessions (key, expires, owner) VALUES (?, ?, ?)
		ON CONFLICT (key) DO UPDATE SET expires = max(expires, excluded.expires)`, key[:], until.UnixNano(), ownerKey(owner)); err != nil {
		return fmt.Errorf("recording an ended session in %s: %w", s.db.path, err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM ended_sessions WHERE owner = ?1 AND key NOT IN
		(SELECT key FROM ended_sessions WHERE owner = ?1 ORDER BY expires DESC LIMIT ?2)`, ownerKey(owner), MaxEndedPerOwner); err != nil {
		return fmt.Errorf("bounding the ended sessions in %s: %w", s.db.path, err)
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

func (s *pgEnded) End(ctx context.Context, key [32]byte, owner string, until, now time.Time) error {
	err := s.db.write(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `DELETE FROM ended_sessions WHERE expires <= $1`, now.UnixNano()); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO ended_sessions (key, expires, owner) VALUES ($1, $2, $3)
			ON CONFLICT (key) DO UPDATE SET expires = GREATEST(ended_sessions.expires, excluded.expires)`, key[:], until.UnixNano(), ownerKey(owner))
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `DELETE FROM ended_sessions WHERE owner = $1 AND key NOT IN
			(SELECT key FROM ended_sessions WHERE owner = $1 ORDER BY expires DESC LIMIT $2)`, ownerKey(owner), MaxEndedPerOwner)
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
