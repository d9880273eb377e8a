package config

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/mcp-router/mcp-router/proxy"
	"github.com/mcp-router/mcp-router/proxy/frontdoor"
)

// HTTPBounds are the http section's bounds on each client of serve --http.
// Zero values take the proxy's defaults.
type HTTPBounds struct {
	// HeaderTimeout bounds the reading of a request's headers (10s).
	HeaderTimeout time.Duration
	// IdleTimeout closes a keep-alive connection idle this long (2m).
	IdleTimeout time.Duration
	// BodyTimeout bounds the reading of one request body (30s).
	BodyTimeout time.Duration
	// MaxSessionsPerClient bounds the sessions of one token, or of one
	// address without tokens (64).
	MaxSessionsPerClient int
	// MaxStreamsPerSession bounds one session's requests in flight (32).
	MaxStreamsPerSession int
	// MaxBodyMemory bounds the request bodies held in memory at once, in
	// bytes (64 MiB).
	MaxBodyMemory int64
}

// set copies what the file sets.
func (r rawHTTP) setBounds(b *HTTPBounds) {
	setDuration(&b.HeaderTimeout, r.HeaderTimeout)
	setDuration(&b.IdleTimeout, r.IdleTimeout)
	setDuration(&b.BodyTimeout, r.BodyTimeout)
	if r.MaxSessionsPerClient != nil {
		b.MaxSessionsPerClient = int(*r.MaxSessionsPerClient)
	}
	if r.MaxStreamsPerSession != nil {
		b.MaxStreamsPerSession = int(*r.MaxStreamsPerSession)
	}
	if r.MaxBodyMemory != nil {
		b.MaxBodyMemory = int64(*r.MaxBodyMemory)
	}
}

func setDuration(dst *time.Duration, v *boundDuration) {
	if v != nil {
		*dst = time.Duration(*v)
	}
}

// Guard sets the guard's bounds from b.
func (b HTTPBounds) Guard(opts *frontdoor.Options) {
	opts.BodyTimeout = b.BodyTimeout
	opts.MaxBodyMemory = b.MaxBodyMemory
	opts.MaxSessionsPerClient = b.MaxSessionsPerClient
	opts.MaxStreamsPerSession = b.MaxStreamsPerSession
}

// Server is the HTTP server's timeouts as the proxy takes them.
func (b HTTPBounds) Server() frontdoor.HTTPServerOptions {
	return frontdoor.HTTPServerOptions{HeaderTimeout: b.HeaderTimeout, IdleTimeout: b.IdleTimeout}
}

// boundDuration is a Go duration in YAML, more than zero.
type boundDuration time.Duration

// UnmarshalYAML parses a Go duration, more than zero.
func (d *boundDuration) UnmarshalYAML(n *yaml.Node) error {
	v, err := time.ParseDuration(n.Value)
	if err != nil || v <= 0 {
		return fmt.Errorf("%q is not a Go duration more than zero (like 30s or 2m)", n.Value)
	}
	*d = boundDuration(v)
	return nil
}

// boundCount is a whole number, one or more.
type boundCount int

// UnmarshalYAML accepts a whole number, one or more.
func (c *boundCount) UnmarshalYAML(n *yaml.Node) error {
	var i int
	if err := n.Decode(&i); err != nil || i < 1 {
		return fmt.Errorf("%q is not a whole number, 1 or more", n.Value)
	}
	*c = boundCount(i)
	return nil
}

// byteSize is a number of bytes, with an optional binary unit: 1048576,
// 512KiB, 64MiB, 1GiB.
type byteSize int64

// UnmarshalYAML parses a size of at least 1 KiB.
func (s *byteSize) UnmarshalYAML(n *yaml.Node) error {
	v, ok := parseSize(n.Value)
	if !ok || v < 1<<10 {
		return fmt.Errorf("%q is not a size of at least 1KiB (like 64MiB, 512KiB or a number of bytes)", n.Value)
	}
	*s = byteSize(v)
	return nil
}

func parseSize(text string) (int64, bool) {
	text = strings.TrimSpace(text)
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}} {
		if num, ok := strings.CutSuffix(text, u.suffix); ok {
			text, mult = strings.TrimSpace(num), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(text, 10, 64)
	if err != nil || n < 0 || n > math.MaxInt64/mult {
		return 0, false
	}
	return n * mult, true
}

// Notifications is the limit on each upstream's notifications as the
// proxy takes it.
func (l Limits) Notifications() proxy.NotificationLimit {
	return proxy.NotificationLimit{PerSecond: l.NotificationsPerSecond, Burst: l.NotificationBurst}
}

// notificationLimits copies the limits section's notification keys.
func (c *Config) notificationLimits(raw rawLimits) {
	if r := raw.NotificationsPerSecond; r != nil {
		c.Limits.NotificationsPerSecond = float64(*r)
	}
	if b := raw.NotificationBurst; b != nil {
		c.Limits.NotificationBurst = int(*b)
	}
}

// positiveRate is a rate more than zero.
type positiveRate float64

// UnmarshalYAML accepts a finite number more than zero.
func (r *positiveRate) UnmarshalYAML(n *yaml.Node) error {
	var f float64
	if err := n.Decode(&f); err != nil || !(f > 0) || math.IsInf(f, 0) {
		return fmt.Errorf("%q is not a number more than zero (like 100 or 0.5)", n.Value)
	}
	*r = positiveRate(f)
	return nil
}
