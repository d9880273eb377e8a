package upstream

import (
	"cmp"
	"log/slog"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"golang.org/x/time/rate"

	"github.com/mcp-router/mcp-router/internal/defaults"
)

// NotificationLimit bounds the notifications each upstream may send: a
// token bucket per upstream. One that finds it empty is dropped, counted
// and logged (once per minute). Zero values take the defaults in brackets.
type NotificationLimit struct {
	// PerSecond refills each upstream's bucket
	// [DefaultNotificationsPerSecond].
	PerSecond float64
	// Burst is the bucket's size [DefaultNotificationBurst].
	Burst int
}

// Defaults of NotificationLimit.
const (
	DefaultNotificationsPerSecond = 100
	DefaultNotificationBurst      = 200
)

// notificationWarnEvery is how often an upstream's drops are logged.
const notificationWarnEvery = time.Minute

// notifyLimiter is one upstream's bucket.
type notifyLimiter struct {
	upstream string
	lim      *rate.Limiter
	logger   *slog.Logger
	metrics  Metrics

	mu       sync.Mutex
	dropped  int       // since the last warning
	warnedAt time.Time // zero before the first warning
}

func newNotifyLimiter(upstream string, l NotificationLimit, logger *slog.Logger, m Metrics) *notifyLimiter {
	defaults.Set(&l.PerSecond, DefaultNotificationsPerSecond)
	defaults.Set(&l.Burst, DefaultNotificationBurst)
	return &notifyLimiter{upstream: upstream, lim: rate.NewLimiter(rate.Limit(l.PerSecond), l.Burst), logger: logger, metrics: m}
}

// allow takes a token for one notification, or counts it dropped. A list
// change takes a token but is never dropped: refreshes are debounced, and
// dropping the last one would leave the catalog stale.
func (n *notifyLimiter) allow(method string) bool {
	kind := notificationKind(method)
	if n.lim.Allow() || kind == "list_changed" {
		return true
	}
	n.metrics.NotificationDropped(n.upstream, kind)
	now := time.Now()
	n.mu.Lock()
	n.dropped++
	warn := n.warnedAt.IsZero() || now.Sub(n.warnedAt) >= notificationWarnEvery
	dropped := n.dropped
	if warn {
		n.warnedAt, n.dropped = now, 0
	}
	n.mu.Unlock()
	if warn {
		n.logger.Warn("upstream notifications over the rate limit, dropping", "dropped", dropped,
			"per_second", float64(n.lim.Limit()), "burst", n.lim.Burst(), "next_warning_in", notificationWarnEvery)
	}
	return false
}

// notificationKinds are the metric labels of the notification methods
// an upstream sends the gateway; any other is "other".
var notificationKinds = map[string]string{
	string(mcp.MethodNotificationProgress):             "progress",
	string(mcp.MethodNotificationMessage):              "message",
	string(mcp.MethodNotificationResourceUpdated):      "resource_updated",
	string(mcp.MethodNotificationToolsListChanged):     "list_changed",
	string(mcp.MethodNotificationResourcesListChanged): "list_changed",
	string(mcp.MethodNotificationPromptsListChanged):   "list_changed",
}

// notificationKind is the metric label of a notification method.
func notificationKind(method string) string { return cmp.Or(notificationKinds[method], "other") }
