package upstream

import (
	"context"
	"fmt"
	"time"
)

// A first `npx -y` (or `uvx`) run installs its package before the server
// reads its stdin, which takes seconds on a fast link and minutes on a
// slow one. So when the connect limit passes with no answer, a stdio child
// that showed a sign of life during it (stderr, or on Linux CPU time or
// bytes read and written by its tree) gets another limit, up to
// connectStretch in all; a child that did nothing is judged hung. Remote
// upstreams show no such signs: their limit is fixed.

// DefaultConnectTimeout is the connect limit when nothing sets one.
const DefaultConnectTimeout = 60 * time.Second

// connectStretch bounds the limits a busy stdio child is given in all.
const connectStretch = 5

// connectLimit is the upstream's limit on one connection attempt.
func (u *Upstream) connectLimit() time.Duration {
	if u.cfg.ConnectTimeout > 0 {
		return u.cfg.ConnectTimeout
	}
	return u.env.InitTimeout
}

// withConnectLimit bounds initialize and the first listing on c by the
// connect limit, stretched while c's child shows signs of life.
func (u *Upstream) withConnectLimit(ctx context.Context, c *Conn) (*idleContext, context.CancelFunc) {
	limit := u.connectLimit()
	if c.work == nil {
		return withCallTimeouts(ctx, limit, limit)
	}
	lc, cancel := withCallTimeouts(ctx, limit, connectStretch*limit)
	last := c.work()
	lc.mu.Lock()
	lc.alive = func() bool {
		now := c.work()
		changed := now != last
		last = now
		if changed {
			u.logger.Info("upstream still starting, and busy: given longer", "limit", limit)
		}
		return changed
	}
	lc.mu.Unlock()
	return lc, cancel
}

// noAnswer says that the upstream did not answer what within the limit.
func (u *Upstream) noAnswer(what string, took time.Duration) error {
	limit := u.connectLimit()
	after := limit.String()
	if more := took - limit; more >= time.Second {
		after = fmt.Sprintf("%s and %s more while it showed signs of life", limit, more.Round(time.Second))
	}
	if u.cfg.Transport == TransportStdio {
		return fmt.Errorf("process running, %w after %s (waiting for %s; connect_timeout sets the limit)", ErrNoAnswer, after, what)
	}
	return fmt.Errorf("connecting to %s: %w after %s (waiting for %s)", u.cfg.host(), ErrNoAnswer, after, what)
}
