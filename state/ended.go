package state

import (
	"context"
	"crypto/sha256"
	"fmt"
	"time"
)

// EndedSessions records the HTTP sessions a client ended on any gateway
// sharing the state, by a hash of their id (a bearer), so that no replica
// resumes them. Records expire with the id and are pruned on each write,
// and each owner keeps at most MaxEndedPerOwner: a client ending sessions
// in a loop drops its own oldest records, never another's.
type EndedSessions interface {
	// End records the session hashed to key, of owner, as ended until
	// until, drops the records expired at now, and drops the owner's
	// records past its MaxEndedPerOwner newest.
	End(ctx context.Context, key [32]byte, owner string, until, now time.Time) error
	// Ended reports whether the session hashed to key is recorded as
	// ended and the record has not expired at now.
	Ended(ctx context.Context, key [32]byte, now time.Time) (bool, error)
}

var _ EndedSessions = endedStore{}

// MaxEndedPerOwner bounds the ended-session records of one owner; past it
// those closest to expiry go, which only their own principal could resume.
const MaxEndedPerOwner = 1000

// ownerKey is how a record names its owner: a hash, not the principal.
func ownerKey(owner string) []byte {
	sum := sha256.Sum256([]byte(owner))
	return sum[:16]
}

// EndedSessions returns the ended sessions in the database.
func (s stores) EndedSessions() EndedSessions { return endedStore(s) }

type endedStore struct{ b engine }

func (s endedStore) End(ctx context.Context, key [32]byte, owner string, until, now time.Time) error {
	err := s.b.write(ctx, func(c conn) error {
		if _, err := c.exec(ctx, `DELETE FROM ended_sessions WHERE expires <= ?`, now.UnixNano()); err != nil {
			return fmt.Errorf("pruning: %w", err)
		}
		_, err := c.exec(ctx, `INSERT INTO ended_sessions (key, expires, owner) VALUES (?, ?, ?)
			ON CONFLICT (key) DO UPDATE SET expires = `+s.b.greatest()+`(ended_sessions.expires, excluded.expires)`,
			key[:], until.UnixNano(), ownerKey(owner))
		if err != nil {
			return err
		}
		if _, err = c.exec(ctx, `DELETE FROM ended_sessions WHERE owner = ? AND key NOT IN
			(SELECT key FROM ended_sessions WHERE owner = ? ORDER BY expires DESC LIMIT ?)`,
			ownerKey(owner), ownerKey(owner), MaxEndedPerOwner); err != nil {
			return fmt.Errorf("bounding: %w", err)
		}
		return nil
	})
	return s.b.wrap(err, "recording an ended session in")
}

func (s endedStore) Ended(ctx context.Context, key [32]byte, now time.Time) (bool, error) {
	var one int
	ok, err := s.b.conn.one(ctx, `SELECT 1 FROM ended_sessions WHERE key = ? AND expires > ?`, []any{key[:], now.UnixNano()}, &one)
	return ok, s.b.wrap(err, "looking up an ended session in")
}
