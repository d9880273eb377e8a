package state

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// QuotaCounts counts calls in fixed windows, for quotas that hold across
// every gateway sharing the state: each key has one count per window,
// raised by one unless it reached the limit (one UPSERT ... RETURNING).
// A key keeps the count of its latest window and, at most, one before it.
type QuotaCounts interface {
	// Take counts one call under key in the window that starts at window,
	// unless limit calls are counted there already; it reports whether it
	// counted the call.
	Take(ctx context.Context, key string, window time.Time, limit int) (bool, error)
}

var (
	_ QuotaCounts = (*sqlQuotas)(nil)
	_ QuotaCounts = (*pgQuotas)(nil)
)

// maxQuotaKey bounds a key (a quota and a principal, both from the
// configuration).
const maxQuotaKey = 1024

func checkQuotaTake(key string, limit int) error {
	switch {
	case key == "" || len(key) > maxQuotaKey:
		return fmt.Errorf("quota key of %d bytes, want 1 to %d", len(key), maxQuotaKey)
	case limit <= 0:
		return fmt.Errorf("quota limit %d, want at least 1", limit)
	}
	return nil
}

// Quotas returns the quota counts in state.db.
func (db *DB) Quotas() QuotaCounts { return &sqlQuotas{db} }

type sqlQuotas struct{ db *DB }

func (s *sqlQuotas) Take(ctx context.Context, key string, window time.Time, limit int) (bool, error) {
	if err := checkQuotaTake(key, limit); err != nil {
		return false, err
	}
	var n int64
	err := s.db.db.QueryRowContext(ctx, `INSERT INTO quota_counts (key, win, n) VALUES (?, ?, 1)
		ON CONFLICT (key, win) DO UPDATE SET n = n + 1 WHERE n < ? RETURNING n`,
		key, window.Unix(), limit).Scan(&n)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("counting a call of %s in %s: %w", key, s.db.path, err)
	}
	if n == 1 { // a new window: the key's older ones are done with
		if _, err := s.db.db.ExecContext(ctx, `DELETE FROM quota_counts WHERE key = ? AND win < ?`, key, window.Unix()); err != nil {
			return true, fmt.Errorf("pruning the counts of %s in %s: %w", key, s.db.path, err)
		}
	}
	return true, nil
}

// Quotas returns the quota counts in the database.
func (db *PG) Quotas() QuotaCounts { return &pgQuotas{db} }

type pgQuotas struct{ db *PG }

func (s *pgQuotas) Take(ctx context.Context, key string, window time.Time, limit int) (bool, error) {
	if err := checkQuotaTake(key, limit); err != nil {
		return false, err
	}
	var n int64
	err := s.db.pool.QueryRow(ctx, `INSERT INTO quota_counts (key, win, n) VALUES ($1, $2, 1)
		ON CONFLICT (key, win) DO UPDATE SET n = quota_counts.n + 1 WHERE quota_counts.n < $3 RETURNING n`,
		key, window.Unix(), limit).Scan(&n)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("counting a call of %s in %s: %w", key, s.db.name, err)
	}
	if n == 1 {
		if _, err := s.db.pool.Exec(ctx, `DELETE FROM quota_counts WHERE key = $1 AND win < $2`, key, window.Unix()); err != nil {
			return true, fmt.Errorf("pruning the counts of %s in %s: %w", key, s.db.name, err)
		}
	}
	return true, nil
}
