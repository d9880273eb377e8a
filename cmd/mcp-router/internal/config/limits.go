package config

import (
	"fmt"
	"math"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/mcp-router/mcp-router/proxy"
)

// Limits is the limits section: bounds on each client session.
type Limits struct {
	// CallsPerSecond refills each session's bucket of tool calls; 0 is no
	// limit (the default).
	CallsPerSecond float64
	// Burst is the bucket's size; 0 is CallsPerSecond rounded up.
	Burst int
	// NotificationsPerSecond and NotificationBurst are the bucket of each
	// upstream's notifications; 0 is the proxy's default (100, 200).
	NotificationsPerSecond float64
	NotificationBurst      int
}

// RateLimit is the limit as the proxy takes it.
func (l Limits) RateLimit() proxy.RateLimit {
	return proxy.RateLimit{CallsPerSecond: l.CallsPerSecond, Burst: l.Burst}
}

type rawLimits struct {
	CallsPerSecond *rateValue  `yaml:"calls_per_second"`
	Burst          *burstValue `yaml:"burst"`

	NotificationsPerSecond *positiveRate `yaml:"notifications_per_second"`
	NotificationBurst      *boundCount   `yaml:"notification_burst"`
}

// rateValue is a number of calls a second, zero or more, with its line.
type rateValue struct {
	N    float64
	Line int
}

// UnmarshalYAML accepts a finite number, zero or more.
func (r *rateValue) UnmarshalYAML(n *yaml.Node) error {
	var f float64
	if err := n.Decode(&f); err != nil || f < 0 || math.IsInf(f, 0) || math.IsNaN(f) {
		return fmt.Errorf("%q is not a number of calls a second (like 5 or 0.5; 0 is no limit)", n.Value)
	}
	*r = rateValue{N: f, Line: n.Line}
	return nil
}

// burstValue is a bucket size, one or more, with its line.
type burstValue struct {
	N    int
	Line int
}

// UnmarshalYAML accepts a whole number, one or more.
func (b *burstValue) UnmarshalYAML(n *yaml.Node) error {
	var i int
	if err := n.Decode(&i); err != nil || i < 1 {
		return fmt.Errorf("%q is not a whole number of calls, 1 or more", n.Value)
	}
	*b = burstValue{N: i, Line: n.Line}
	return nil
}

// GraceValue is a Go duration in YAML that may be zero ("0", "30s").
type GraceValue time.Duration

// UnmarshalYAML parses a Go duration, zero or more.
func (g *GraceValue) UnmarshalYAML(n *yaml.Node) error {
	v, err := time.ParseDuration(n.Value)
	if err != nil || v < 0 {
		return fmt.Errorf("%q is not a Go duration, zero or more (like 30s or 2m; 0 cancels at once)", n.Value)
	}
	*g = GraceValue(v)
	return nil
}

// serving checks the limits section and sets what serving takes from the
// file: the limits and the HTTP disconnect grace period.
func (c *Config) serving(v *validator, raw *rawConfig) {
	c.HTTP.DisconnectGrace = proxy.DefaultDisconnectGrace
	if g := raw.HTTP.DisconnectGrace; g != nil {
		c.HTTP.DisconnectGrace = time.Duration(*g)
	}
	raw.HTTP.setBounds(&c.HTTP.Bounds)
	c.notificationLimits(raw.Limits)
	l := raw.Limits
	if l.CallsPerSecond != nil {
		c.Limits.CallsPerSecond = l.CallsPerSecond.N
	}
	if l.Burst == nil {
		return
	}
	if c.Limits.CallsPerSecond == 0 {
		v.errorf(l.Burst.Line, "limits.burst", "needs limits.calls_per_second, the rate the bucket refills at")
		return
	}
	c.Limits.Burst = l.Burst.N
}

// ServerGrace is the disconnect grace period as the proxy takes it: zero
// in the file (cancel at once) is negative there.
func (h HTTP) ServerGrace() time.Duration {
	if h.DisconnectGrace == 0 {
		return -1
	}
	return h.DisconnectGrace
}
