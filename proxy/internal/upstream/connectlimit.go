package upstream

import (
	"context"
	"fmt"
	"time"
)

// How long a connection attempt may take. A first `npx -y` (or `uvx`)
// run installs its package before the server reads its stdin: that took
// 4 to 6 s here for @modelcontextprotocol/server-memory (50 MB) with a
// fresh npm cache on a fast link, and takes minutes on a slow one. So the
// limit has a default that fits a cold install with a wide margin, can
// be set per upstream (Config.ConnectTimeout), and is stretched for a
// stdio child that is visibly working:
//
// When the limit (ConnectTimeout, else Env.InitTimeout) passes with no
// answer, the attempt goes on for another limit if the child showed a
// sign of life during the last one: it wrote to stderr, or (Linux) its
// process tree used CPU or read or wrote bytes (an install downloading
// and unpacking). A child that did nothing for a whole limit is judged
// hung and restarted; none is given more than connectStretch limits in
// all. Remote upstreams show no such signs: their limit is fixed.

// DefaultConnectTimeout is the connect limit when neither the upstream
// nor the gateway sets one.
const DefaultConnectTimeout = 60 * time.Second

// connectStretch bounds the limits, in all, that a stdio child showing
// signs of life is given to connect.
const connectStretch = 5

// connectLimit is the upstream's limit on one connection attempt.
func (u *Upstream) connectLimit() time.Duration {
	if u.cfg.ConnectTimeout > 0 {
		return u.cfg.ConnectTimeout
	}
	return u.env.InitTimeout
}

// withConnectLimit bounds initialize and the first listing on c: the
// connect limit, stretched while c's child shows signs of life (see
// above). cancel releases it.
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

// noAnswer says that the upstream did not answer what within the limit
// (and the time it was given more, while busy).
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
