package state

import (
	"context"
	"fmt"
	"time"
)

// QuotaCounts counts calls per key in fixed windows, for quotas across
// every gateway sharing the state; a key keeps at most its last two.
type QuotaCounts interface {
	// Take counts one call under key in the window that starts at window,
	// unless limit calls are counted there already; it reports whether it
	// counted the call.
	Take(ctx context.Context, key string, window time.Time, limit int) (bool, error)
}

var _ QuotaCounts = quotaStore{}

// maxQuotaKey bounds a key (a quota and a principal).
const maxQuotaKey = 1024

// Quotas returns the quota counts in the database.
func (s stores) Quotas() QuotaCounts { return quotaStore(s) }

type quotaStore struct{ b engine }

func (s quotaStore) Take(ctx context.Context, key string, window time.Time, limit int) (bool, error) {
	switch {
	case key == "" || len(key) > maxQuotaKey:
		return false, fmt.Errorf("quota key of %d bytes, want 1 to %d", len(key), maxQuotaKey)
	case limit <= 0:
		return false, fmt.Errorf("quota limit %d, want at least 1", limit)
	}
	var n int64
	ok, err := s.b.conn.one(ctx, `INSERT INTO quota_counts (key, win, n) VALUES (?, ?, 1)
		ON CONFLICT (key, win) DO UPDATE SET n = quota_counts.n + 1 WHERE quota_counts.n < ? RETURNING n`,
		[]any{key, window.Unix(), limit}, &n)
	if err != nil {
		return false, fmt.Errorf("counting a call of %s in %s: %w", key, s.b.name, err)
	}
	if !ok {
		return false, nil
	}
	if n == 1 { // a new window: the key's older ones are done with
		if _, err := s.b.conn.exec(ctx, `DELETE FROM quota_counts WHERE key = ? AND win < ?`, key, window.Unix()); err != nil {
			return true, fmt.Errorf("pruning the counts of %s in %s: %w", key, s.b.name, err)
		}
	}
	return true, nil
}
