package config

import (
	"cmp"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/mcp-router/mcp-router/executor"
	"github.com/mcp-router/mcp-router/proxy"
	"github.com/mcp-router/mcp-router/proxy/call"
	"github.com/mcp-router/mcp-router/proxy/results"
)

// Limits is the limits section: bounds on each client session, and on everything the gateway reads
// or builds from outside. A bound left zero takes the default of the package that applies it.
type Limits struct {
	// RateLimit is each session's bucket of tool calls: CallsPerSecond refills it, 0 is no limit (the
	// default); Burst is its size, 0 is CallsPerSecond rounded up.
	RateLimit proxy.RateLimit
	// StartWait is how long a call of a tool whose upstream is still starting waits for it; zero
	// takes proxy.DefaultStartWait (proxy.Options.StartWait).
	StartWait time.Duration
	// ConnectTimeout bounds an upstream's start (initialize and first listing) unless its own
	// connect_timeout does; zero takes proxy.DefaultConnectTimeout (proxy.Options.InitTimeout).
	ConnectTimeout time.Duration

	// What upstreams send (proxy.UpstreamConfig).
	UpstreamMessageBytes int // one message: a stdio line, an HTTP reply, an event-stream line or event
	UpstreamErrorBytes   int // the body of an HTTP error reply
	ListingBytes         int // one listing (tools, resources, templates, prompts) across its pages
	ListingItems         int
	// Plan is what one run_plan builds, and its calls at once: of the plan, of the plan on one
	// upstream, of one foreach step.
	Plan executor.Options
	// Inputs bound what the model hands the gateway's own tools.
	Inputs proxy.InputLimits
	// The lessons store's text (lessons.MemoryOptions.MaxBytes).
	LessonsBytes int
	// What of a tool result reaches the model; the whole of a longer one is kept for its caller
	// (proxy.Options.ModelResultBytes).
	ModelResultBytes int
	// KeptResults bound the whole results kept: per principal, across principals, and how long each
	// stays readable; zero takes the results package's defaults.
	KeptResults results.Options

	// Calls at once: of one stdio client, on and waiting for one upstream.
	StdioCalls    int
	UpstreamCalls int
	UpstreamQueue int

	// Notifications is the bucket of each upstream's notifications; 0 takes
	// proxy.DefaultNotificationsPerSecond and proxy.DefaultNotificationBurst.
	Notifications proxy.NotificationLimit

	// Quotas bound each principal's calls per tool (proxy.Options.Quotas).
	Quotas []proxy.Quota
	// RepeatCalls is how many times in a row a session may make the same call; 0 is no bound
	// (proxy.Options.RepeatCalls).
	RepeatCalls int
}

func (l Limits) upstream(u *proxy.UpstreamConfig) {
	u.MaxMessageBytes, u.MaxErrorBodyBytes = l.UpstreamMessageBytes, l.UpstreamErrorBytes
	u.MaxListingBytes, u.MaxListingItems = l.ListingBytes, l.ListingItems
}

type rawLimits struct {
	CallsPerSecond rateValue     `yaml:"calls_per_second"`
	Burst          burstValue    `yaml:"burst"`
	StartWait      DurationValue `yaml:"start_wait"`
	ConnectTimeout DurationValue `yaml:"connect_timeout"`

	UpstreamMessageBytes sizeValue       `yaml:"upstream_message_bytes"`
	UpstreamErrorBytes   sizeValue       `yaml:"upstream_error_bytes"`
	ListingBytes         sizeValue       `yaml:"listing_bytes"`
	ListingItems         sizeValue       `yaml:"listing_items"`
	PlanTextBytes        sizeValue       `yaml:"plan_text_bytes"`
	PlanExpandedBytes    sizeValue       `yaml:"plan_expanded_bytes"`
	PlanResultBytes      sizeValue       `yaml:"plan_result_bytes"`
	PlanForeachItems     sizeValue       `yaml:"plan_foreach_items"`
	PlanCalls            sizeValue       `yaml:"plan_calls"`
	QueryBytes           sizeValue       `yaml:"query_bytes"`
	NoteBytes            sizeValue       `yaml:"note_bytes"`
	ContextBytes         sizeValue       `yaml:"context_bytes"`
	LessonsBytes         sizeValue       `yaml:"lessons_bytes"`
	ModelResultBytes     sizeValue       `yaml:"model_result_bytes"`
	ResultStoreBytes     sizeValue       `yaml:"result_store_bytes"`
	ResultStoreTotal     sizeValue       `yaml:"result_store_total_bytes"`
	ResultTTL            DurationValue   `yaml:"result_ttl"`
	StdioCalls           stdioCallsValue `yaml:"stdio_calls"`
	UpstreamCalls        sizeValue       `yaml:"upstream_calls"`
	UpstreamQueue        sizeValue       `yaml:"upstream_queue"`
	PlanParallel         sizeValue       `yaml:"plan_parallel"`
	PlanUpstreamCalls    sizeValue       `yaml:"plan_upstream_calls"`
	PlanForeachCalls     sizeValue       `yaml:"plan_foreach_calls"`

	NotificationsPerSecond positiveRate `yaml:"notifications_per_second"`
	NotificationBurst      sizeValue    `yaml:"notification_burst"`

	Quotas      []rawQuota `yaml:"quotas"`
	RepeatCalls burstValue `yaml:"repeat_calls"`
}

// rawQuota is one entry of limits.quotas; principal and tool default to "*".
type rawQuota struct {
	Principal      *lineString `yaml:"principal"`
	Tool           *lineString `yaml:"tool"`
	CallsPerMinute *burstValue `yaml:"calls_per_minute"`
	Concurrent     *burstValue `yaml:"concurrent"`
}

type lineString struct {
	S    string
	Line int
}

// UnmarshalYAML accepts a single string.
func (l *lineString) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("want a single value, not a list or a map")
	}
	*l = lineString{S: n.Value, Line: n.Line}
	return nil
}

// quotas checks limits.quotas and limits.repeat_calls and keeps them.
func (c *Config) quotas(v *validator, l rawLimits) {
	c.Limits.RepeatCalls = l.RepeatCalls.N
	for i, r := range l.Quotas {
		q, line := proxy.Quota{Principal: "*", Tool: "*"}, 0
		if r.Principal != nil {
			q.Principal, line = r.Principal.S, r.Principal.Line
		}
		if r.Tool != nil {
			q.Tool, line = r.Tool.S, r.Tool.Line
		}
		if r.CallsPerMinute != nil {
			q.CallsPerMinute, line = r.CallsPerMinute.N, r.CallsPerMinute.Line
		}
		if r.Concurrent != nil {
			q.Concurrent, line = r.Concurrent.N, r.Concurrent.Line
		}
		if err := call.CheckQuota(q); err != nil {
			v.errorf(line, fmt.Sprintf("limits.quotas[%d]", i), "%v", err)
			continue
		}
		c.Limits.Quotas = append(c.Limits.Quotas, q)
	}
}

// sizeValue is a whole number, 1 or more: a count, or a size in bytes that may carry a unit (64KiB,
// 16MiB, 1GiB; KB, MB and GB are the same powers of 1024).
type sizeValue int

// UnmarshalYAML accepts a whole number, 1 or more, with an optional unit.
func (z *sizeValue) UnmarshalYAML(n *yaml.Node) error {
	v, ok := parseSize(n.Value, len(sizeUnits))
	if !ok || v < 1 || v > math.MaxInt32 {
		return fmt.Errorf("%q is not a whole number, 1 or more (a size may end in KiB, MiB or GiB, like 16MiB)", n.Value)
	}
	*z = sizeValue(v)
	return nil
}

func (l *Limits) bounds(raw rawLimits) {
	l.UpstreamMessageBytes, l.UpstreamErrorBytes = int(raw.UpstreamMessageBytes), int(raw.UpstreamErrorBytes)
	l.ListingBytes, l.ListingItems = int(raw.ListingBytes), int(raw.ListingItems)
	l.Plan = executor.Options{MaxTextBytes: int(raw.PlanTextBytes), MaxExpandedBytes: int(raw.PlanExpandedBytes),
		MaxResultBytes: int(raw.PlanResultBytes), MaxForeachItems: int(raw.PlanForeachItems), MaxCalls: int(raw.PlanCalls),
		MaxParallel: int(raw.PlanParallel), PerUpstream: int(raw.PlanUpstreamCalls), ForeachWidth: int(raw.PlanForeachCalls)}
	l.Inputs = proxy.InputLimits{MaxQueryBytes: int(raw.QueryBytes), MaxNoteBytes: int(raw.NoteBytes), MaxContextBytes: int(raw.ContextBytes)}
	l.KeptResults = results.Options{PerPrincipal: int(raw.ResultStoreBytes), Total: int(raw.ResultStoreTotal), TTL: time.Duration(raw.ResultTTL)}
	l.LessonsBytes, l.ModelResultBytes = int(raw.LessonsBytes), int(raw.ModelResultBytes)
	l.StdioCalls, l.UpstreamCalls, l.UpstreamQueue = int(raw.StdioCalls), int(raw.UpstreamCalls), int(raw.UpstreamQueue)
	l.Notifications = proxy.NotificationLimit{PerSecond: float64(raw.NotificationsPerSecond), Burst: int(raw.NotificationBurst)}
}

// stdioCallsValue is limits.stdio_calls: a whole number from 1 to proxy.MaxStdioCalls.
type stdioCallsValue int

// UnmarshalYAML accepts a whole number from 1 to proxy.MaxStdioCalls.
func (s *stdioCallsValue) UnmarshalYAML(n *yaml.Node) error {
	i, err := strconv.Atoi(strings.TrimSpace(n.Value))
	if err != nil || i < 1 || i > proxy.MaxStdioCalls {
		return fmt.Errorf("%q is not a whole number of calls from 1 to %d", n.Value, proxy.MaxStdioCalls)
	}
	*s = stdioCallsValue(i)
	return nil
}

// rateValue is a number of calls a second, zero or more.
type rateValue float64

// UnmarshalYAML accepts a finite number, zero or more.
func (r *rateValue) UnmarshalYAML(n *yaml.Node) error {
	var f float64
	if err := n.Decode(&f); err != nil || f < 0 || math.IsInf(f, 0) || math.IsNaN(f) {
		return fmt.Errorf("%q is not a number of calls a second (like 5 or 0.5; 0 is no limit)", n.Value)
	}
	*r = rateValue(f)
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

// serving checks the limits section and sets what serving takes from the file: the limits and the
// HTTP disconnect grace period.
func (c *Config) serving(v *validator, raw *rawConfig) {
	if g := raw.HTTP.DisconnectGrace; g != nil {
		c.HTTP.DisconnectGrace = cmp.Or(time.Duration(*g), -1) // the file's 0: cancel at once
	}
	raw.HTTP.setBounds(&c.HTTP.Bounds)
	c.HTTP.TrustedProxies = raw.HTTP.trustedProxies()
	l := raw.Limits
	c.Limits.StartWait, c.Limits.ConnectTimeout = time.Duration(l.StartWait), time.Duration(l.ConnectTimeout)
	c.Limits.bounds(l)
	c.quotas(v, l)
	c.Limits.RateLimit.CallsPerSecond = float64(l.CallsPerSecond)
	switch {
	case l.Burst.N == 0: // not set
	case l.CallsPerSecond == 0:
		v.errorf(l.Burst.Line, "limits.burst", "needs limits.calls_per_second, the rate the bucket refills at")
	default:
		c.Limits.RateLimit.Burst = l.Burst.N
	}
}
