package proxy

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promauto"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/mcp-router/mcp-router/executor"
	"github.com/mcp-router/mcp-router/internal/loopback"
	"github.com/mcp-router/mcp-router/proxy/call"
	"github.com/mcp-router/mcp-router/proxy/frontdoor"
	"github.com/mcp-router/mcp-router/proxy/integrity"
	"github.com/mcp-router/mcp-router/proxy/internal/upstream"
)

// Metrics are the gateway's Prometheus series, on a registry of their own
// with the Go runtime and process collectors. Every method is safe for
// concurrent use and does nothing on a nil *Metrics.
//
// Label values are bounded: the first maxToolLabels tool names keep their
// own label, later ones and names not in the catalog count as "other";
// the latency histogram is by upstream only. Per-profile gauges carry a
// profile label (ForProfile); counters and histograms sum over profiles.
type Metrics struct {
	handler http.Handler // promhttp over the registry
	tools   *toolLabels
	profile string // the profile label of this view (ForProfile)

	calls      *prometheus.CounterVec   // upstream, tool, outcome
	toolErrors *prometheus.CounterVec   // upstream, tool
	callDur    *prometheus.HistogramVec // upstream

	routeDur     prometheus.Histogram
	routeSel     prometheus.Histogram
	routeAlerts  *prometheus.CounterVec // kind
	discoveries  prometheus.Counter
	discAdded    prometheus.Counter
	discEvicted  prometheus.Counter
	breakerTrips prometheus.Counter

	sessions       prometheus.Gauge
	sessionsOpened prometheus.Counter
	beltSessions   *prometheus.GaugeVec // profile
	beltTools      *prometheus.GaugeVec // profile
	catalogTools   *prometheus.GaugeVec // profile

	upstreams *upstreamStates
	restarts  *prometheus.CounterVec // upstream

	notesDropped *prometheus.CounterVec // upstream, kind

	plans     *prometheus.CounterVec   // strategy
	planDur   *prometheus.HistogramVec // strategy
	planSteps *prometheus.CounterVec   // status

	resultFindings *prometheus.CounterVec // upstream, kind, action
	auditDropped   prometheus.Counter

	log *callRecord // for the gateway's status, shared by every view
}

// maxToolLabels caps the distinct values of the tool label.
const maxToolLabels = 1000

// otherTool is the tool label past the cap and for names not in the catalog.
const otherTool = "other"

// Histogram buckets, in seconds or tools.
var (
	callBuckets     = []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120, 300}
	routeBuckets    = []float64{50e-6, 100e-6, 250e-6, 500e-6, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5}
	selectedBuckets = []float64{0, 1, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30}
	planBuckets     = []float64{.01, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600}
)

// untimedKinds are not timed. The refused never reached an upstream: their
// instant answers would make an outage look fast. A cancelled call lasted as
// long as the client waited, not as long as the upstream took.
var untimedKinds = map[string]bool{
	string(call.KindCancelled):        true,
	string(call.KindUnknownTool):      true,
	string(call.KindBlocked):          true,
	string(call.KindCircuitOpen):      true,
	string(call.KindQueueFull):        true,
	string(call.KindRateLimited):      true,
	string(call.KindInvalidArguments): true,
	string(call.KindQuotaExceeded):    true,
	string(call.KindRepeatedCall):     true,
}

// NewMetrics returns metrics with every series registered. It does no I/O.
func NewMetrics() *Metrics {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m := &Metrics{tools: newToolLabels(maxToolLabels), upstreams: newUpstreamStates(), log: &callRecord{}}
	reg.MustRegister(m.upstreams)
	f := promauto.With(reg)
	m.registerCalls(f)
	m.registerRouting(f)
	m.registerSessions(f)
	m.registerUpstreams(f)
	m.registerPlans(f)
	m.auditDropped = counter(f, "mcp_router_audit_records_dropped_total",
		"Audit records dropped: the audit store failed and its on-disk spool was full, or a record came after the audit log closed.")
	m.handler = promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg})
	return m
}

func counter(f promauto.Factory, name, help string) prometheus.Counter {
	return f.NewCounter(prometheus.CounterOpts{Name: name, Help: help})
}

func counterVec(f promauto.Factory, name, help string, labels ...string) *prometheus.CounterVec {
	return f.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
}

func gaugeVec(f promauto.Factory, name, help string, labels ...string) *prometheus.GaugeVec {
	return f.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, labels)
}

func (m *Metrics) registerCalls(f promauto.Factory) {
	m.calls = counterVec(f, "mcp_router_tool_calls_total",
		fmt.Sprintf("Tool calls through the hub, by upstream, tool and outcome: ok (the tool ran, isError results included) or the failure kind. "+
			"tool is %q past %d distinct names and for names not in the catalog.", otherTool, maxToolLabels),
		"upstream", "tool", "outcome")
	m.toolErrors = counterVec(f, "mcp_router_tool_error_results_total",
		"Tool calls that ran and returned an isError result (also counted as outcome ok in mcp_router_tool_calls_total).", "upstream", "tool")
	m.callDur = f.NewHistogramVec(prometheus.HistogramOpts{
		Name: "mcp_router_tool_call_duration_seconds",
		Help: "Duration of tool calls that reached an upstream, in seconds, by upstream (not by tool, to bound the series); " +
			"calls the client cancelled are not timed (they count as outcome cancelled in mcp_router_tool_calls_total).",
		Buckets: callBuckets,
	}, []string{"upstream"})
	m.resultFindings = counterVec(f, "mcp_router_tool_result_findings_total",
		"Tool results holding secrets or injection markers, by upstream, finding kind (aws_access_key_id, "+
			"hidden_instruction, ...) and action (the upstream's result policy: warn, redact or block).",
		"upstream", "kind", "action")
}

func (m *Metrics) registerRouting(f promauto.Factory) {
	m.routeDur = f.NewHistogram(prometheus.HistogramOpts{
		Name: "mcp_router_routing_duration_seconds", Help: "Duration of routing decisions, in seconds.", Buckets: routeBuckets,
	})
	m.routeSel = f.NewHistogram(prometheus.HistogramOpts{
		Name: "mcp_router_routing_selected_tools", Help: "Tools selected per routing decision.", Buckets: selectedBuckets,
	})
	m.routeAlerts = counterVec(f, "mcp_router_routing_alerts_total", "Routing alerts raised, by kind (collision, no_match, partial_match).", "kind")
	for _, kind := range []string{"collision", "no_match", "partial_match"} {
		m.routeAlerts.WithLabelValues(kind)
	}
	m.discoveries = counter(f, "mcp_router_discoveries_total", "request_more_tools discoveries that ran (not those the breaker refused).")
	m.discAdded = counter(f, "mcp_router_discovery_added_tools_total", "Tools discoveries put on a session's belt.")
	m.discEvicted = counter(f, "mcp_router_discovery_evicted_tools_total", "Tools discoveries evicted from a session's belt to make room.")
	m.breakerTrips = counter(f, "mcp_router_breaker_trips_total", "Times a session's discovery breaker opened after searches without a successful call.")
}

func (m *Metrics) registerSessions(f promauto.Factory) {
	m.sessions = f.NewGauge(prometheus.GaugeOpts{Name: "mcp_router_sessions", Help: "Client sessions open now."})
	m.sessionsOpened = counter(f, "mcp_router_sessions_opened_total", "Client sessions opened.")
	m.beltSessions = gaugeVec(f, "mcp_router_belt_sessions", "Sessions holding a routed tool belt now (routing mode only), by profile.", "profile")
	m.beltTools = gaugeVec(f, "mcp_router_belt_tools",
		"Routed tools on all sessions' belts now, by profile; divide by mcp_router_belt_sessions for the mean belt.", "profile")
	m.catalogTools = gaugeVec(f, "mcp_router_catalog_tools",
		"Tools in the profile's catalog now (its upstreams' tools that clients may list and call), by profile.", "profile")
}

// ForProfile returns the view of m that profile's hub and server record
// through: the same series, with profile as the gauges' profile label.
func (m *Metrics) ForProfile(profile string) *Metrics {
	if m == nil {
		return nil
	}
	v := *m
	v.profile = profile
	v.beltSessions.WithLabelValues(profile)
	v.beltTools.WithLabelValues(profile)
	v.catalogTools.WithLabelValues(profile)
	return &v
}

func (m *Metrics) registerUpstreams(f promauto.Factory) {
	m.restarts = counterVec(f, "mcp_router_upstream_restarts_total",
		"Reconnection attempts after an upstream's connection failed or was lost, by upstream.", "upstream")
	m.notesDropped = counterVec(f, "mcp_router_upstream_notifications_dropped_total",
		"Notifications from upstreams dropped by the per-upstream rate limit, by upstream and kind (progress, message, resource_updated, other).",
		"upstream", "kind")
}

func (m *Metrics) registerPlans(f promauto.Factory) {
	m.plans = counterVec(f, "mcp_router_plans_total", "Plans run, by strategy (the shape of the plan's graph).", "strategy")
	m.planDur = f.NewHistogramVec(prometheus.HistogramOpts{
		Name: "mcp_router_plan_duration_seconds", Help: "Duration of plan runs, in seconds, by strategy.", Buckets: planBuckets,
	}, []string{"strategy"})
	m.planSteps = counterVec(f, "mcp_router_plan_steps_total",
		"Plan steps run, by final status (succeeded, failed, skipped, cancelled, timed_out).", "status")
	for _, s := range []executor.Status{executor.Succeeded, executor.Failed, executor.Skipped, executor.Cancelled, executor.TimedOut} {
		m.planSteps.WithLabelValues(string(s))
	}
}

// Handler serves the metrics; on a nil *Metrics it answers 404.
func (m *Metrics) Handler() http.Handler {
	if m == nil {
		return http.NotFoundHandler()
	}
	return m.handler
}

// CallDone records a tool call through the hub: kind is "" when the tool
// ran, else the UpstreamError Kind.
func (m *Metrics) CallDone(upstream, tool string, dur time.Duration, kind string) {
	if m == nil {
		return
	}
	label := otherTool
	if kind != string(call.KindUnknownTool) {
		label = m.tools.label(tool)
	}
	m.log.done(Call{At: time.Now().UTC(), Upstream: upstream, Tool: tool, Dur: dur, Kind: kind}, label)
	m.calls.WithLabelValues(upstream, label, cmp.Or(kind, "ok")).Inc()
	if !untimedKinds[kind] {
		m.callDur.WithLabelValues(upstream).Observe(durSeconds(dur))
	}
}

// ToolError records a call that ran and returned an isError result.
func (m *Metrics) ToolError(upstream, tool string) {
	if m == nil {
		return
	}
	m.log.toolError(upstream, tool)
	m.toolErrors.WithLabelValues(upstream, m.tools.label(tool)).Inc()
}

// observeCall records what Hub.CallTool returned.
func (m *Metrics) observeCall(upstream, tool string, dur time.Duration, res *mcp.CallToolResult, err error) {
	if m == nil {
		return
	}
	if err != nil {
		kind := string(call.KindUpstreamError)
		var ue *UpstreamError
		if errors.As(err, &ue) {
			kind, upstream = string(ue.Kind), ue.Upstream
		}
		m.CallDone(upstream, tool, dur, kind)
		return
	}
	m.CallDone(upstream, tool, dur, "")
	if res != nil && res.IsError {
		m.ToolError(upstream, tool)
	}
}

// ResultFindings records the kinds of secrets or injection markers found
// in a tool result, and the action the result policy took.
func (m *Metrics) ResultFindings(upstream, action string, kinds []string) {
	if m == nil {
		return
	}
	for _, kind := range kinds {
		m.resultFindings.WithLabelValues(upstream, kind, action).Inc()
	}
}

// RouteDone records a routing decision: its duration, selection size and
// alert kinds.
func (m *Metrics) RouteDone(dur time.Duration, selected int, alerts []string) {
	if m == nil {
		return
	}
	m.routeDur.Observe(durSeconds(dur))
	m.routeSel.Observe(float64(max(selected, 0)))
	for _, kind := range alerts {
		m.routeAlerts.WithLabelValues(kind).Inc()
	}
}

// Discovery records a request_more_tools discovery that ran.
func (m *Metrics) Discovery(added, evicted int) {
	if m == nil {
		return
	}
	m.discoveries.Inc()
	m.discAdded.Add(float64(max(added, 0)))
	m.discEvicted.Add(float64(max(evicted, 0)))
}

// BreakerTrip records a session's discovery breaker opening.
func (m *Metrics) BreakerTrip() {
	if m != nil {
		m.breakerTrips.Inc()
	}
}

// BeltSize sets how many routing sessions hold a belt and how many tools
// all their belts hold (gauges: a histogram would weigh a busy belt many
// times over).
func (m *Metrics) BeltSize(sessions int, total int) {
	if m == nil {
		return
	}
	m.beltSessions.WithLabelValues(m.profile).Set(float64(max(sessions, 0)))
	m.beltTools.WithLabelValues(m.profile).Set(float64(max(total, 0)))
}

// CatalogSize sets how many tools the profile's catalog holds.
func (m *Metrics) CatalogSize(tools int) {
	if m != nil {
		m.catalogTools.WithLabelValues(m.profile).Set(float64(max(tools, 0)))
	}
}

// UpstreamState records an upstream's connection state.
func (m *Metrics) UpstreamState(upstream string, state string) {
	if m != nil {
		m.upstreams.set(m.profile, upstream, state)
	}
}

// UpstreamRestart records a reconnection attempt of an upstream.
func (m *Metrics) UpstreamRestart(upstream string) {
	if m != nil {
		m.restarts.WithLabelValues(upstream).Inc()
	}
}

// PlanDone records a plan run and how many steps ended in each status.
func (m *Metrics) PlanDone(strategy string, dur time.Duration, statuses map[string]int) {
	if m == nil {
		return
	}
	m.plans.WithLabelValues(strategy).Inc()
	m.planDur.WithLabelValues(strategy).Observe(durSeconds(dur))
	for status, n := range statuses {
		if n > 0 {
			m.planSteps.WithLabelValues(status).Add(float64(n))
		}
	}
}

// SessionOpened records a client session starting.
func (m *Metrics) SessionOpened() {
	if m == nil {
		return
	}
	m.sessions.Inc()
	m.sessionsOpened.Inc()
}

// SessionClosed records a client session ending.
func (m *Metrics) SessionClosed() {
	if m != nil {
		m.sessions.Dec()
	}
}

func durSeconds(d time.Duration) float64 { return max(d, 0).Seconds() }

// toolLabels hands out tool labels: a name's own until max names have
// one, "other" after that.
type toolLabels struct {
	max int

	mu   sync.Mutex
	seen map[string]string // tool name → its label
}

func newToolLabels(max int) *toolLabels {
	return &toolLabels{max: max, seen: make(map[string]string)}
}

// label is the tool's name with anything shaped like a secret redacted
// (metrics leave the process), or otherTool past the bound.
func (t *toolLabels) label(name string) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if l, ok := t.seen[name]; ok {
		return l
	}
	if len(t.seen) >= t.max {
		return otherTool
	}
	l := integrity.RedactSecrets(name)
	t.seen[name] = l
	return l
}

// upstreamStates is mcp_router_upstream_up, written at scrape time so that
// a scrape never sees an upstream in two states, or in none.
type upstreamStates struct {
	desc *prometheus.Desc

	mu      sync.Mutex
	current map[profileUpstream]string // → state
}

type profileUpstream struct{ profile, upstream string }

var reportedStates = []upstream.State{upstream.StateConnecting, upstream.StateConnected, upstream.StateFailed, upstream.StateStopped}

func newUpstreamStates() *upstreamStates {
	return &upstreamStates{
		desc: prometheus.NewDesc("mcp_router_upstream_up",
			"1 for the upstream's current connection state, 0 for the others (connecting, connected, failed, stopped), by profile and upstream.",
			[]string{"profile", "upstream", "state"}, nil),
		current: make(map[profileUpstream]string),
	}
}

func (u *upstreamStates) set(profile, upstream, state string) {
	u.mu.Lock()
	u.current[profileUpstream{profile, upstream}] = state
	u.mu.Unlock()
}

func (u *upstreamStates) Describe(ch chan<- *prometheus.Desc) { ch <- u.desc }

func (u *upstreamStates) Collect(ch chan<- prometheus.Metric) {
	u.mu.Lock()
	current := maps.Clone(u.current)
	u.mu.Unlock()
	for k, state := range current {
		for _, s := range reportedStates {
			v := 0.0
			if string(s) == state {
				v = 1
			}
			ch <- prometheus.MustNewConstMetric(u.desc, prometheus.GaugeValue, v, k.profile, k.upstream, string(s))
		}
	}
}

var _ prometheus.Collector = (*upstreamStates)(nil)

// metricsShutdownGrace is how long a scrape may finish once ServeMetrics's
// context ends.
const metricsShutdownGrace = 5 * time.Second

// ServeMetrics serves m at /metrics on addr until ctx ends. An address
// without a host listens on loopback only; any other host is served with a
// warning (the metrics carry no authentication). The Host of each request
// is checked as the MCP endpoint's (loopback, addr's host, or hosts), so
// that a web page cannot read them through a rebound name. A nil log is
// silent.
func ServeMetrics(ctx context.Context, addr string, m *Metrics, hosts []string, log *slog.Logger) error {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	hostport, loopback, err := metricsAddr(addr)
	if err != nil {
		return err
	}
	if !loopback {
		log.Warn("metrics served beyond loopback, without authentication", "addr", hostport)
	}
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", hostport)
	if err != nil {
		return fmt.Errorf("listening for metrics: %w", err)
	}
	if h, _, _ := net.SplitHostPort(addr); h != "" && h != "0.0.0.0" && h != "::" {
		hosts = append(hosts[:len(hosts):len(hosts)], h)
	}
	return serveMetrics(ctx, ln, m, frontdoor.NewChecks(frontdoor.Options{AllowedHosts: hosts, Logger: log}), log)
}

// metricsAddr is where to listen for addr, and whether that is loopback.
func metricsAddr(addr string) (hostport string, local bool, err error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", false, fmt.Errorf("metrics address %q: %w", addr, err)
	}
	switch {
	case host == "":
		return net.JoinHostPort("127.0.0.1", port), true, nil
	case loopback.Host(host):
		return addr, true, nil
	default:
		return addr, false, nil
	}
}

// serveMetrics serves m on ln behind door's checks until ctx ends.
func serveMetrics(ctx context.Context, ln net.Listener, m *Metrics, door *frontdoor.Checks, log *slog.Logger) error {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if door.CheckSite(w, r) {
			m.Handler().ServeHTTP(w, r)
		}
	}))
	srv := frontdoor.NewHTTPServer(mux, frontdoor.HTTPServerOptions{})
	srv.ErrorLog = slog.NewLogLogger(log.Handler(), slog.LevelDebug)
	log.Info("serving metrics", "addr", ln.Addr().String())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		return fmt.Errorf("serving metrics on %s: %w", ln.Addr(), err)
	case <-ctx.Done():
	}
	shutCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), metricsShutdownGrace)
	defer cancel()
	err := srv.Shutdown(shutCtx)
	if err != nil {
		_ = srv.Close() // the scrapes that outlived the grace period
	}
	<-served // http.ErrServerClosed, as soon as Shutdown began
	if err != nil {
		return fmt.Errorf("stopping metrics server: %w", err)
	}
	log.Info("metrics stopped")
	return nil
}

// NotificationDropped records an upstream notification dropped by its
// rate limit.
func (m *Metrics) NotificationDropped(upstream, kind string) {
	if m != nil {
		m.notesDropped.WithLabelValues(upstream, kind).Inc()
	}
}

var _ upstream.Metrics = (*Metrics)(nil)

// AuditDropped counts an audit record dropped (audit.Options.OnDrop).
func (m *Metrics) AuditDropped() {
	if m != nil {
		m.auditDropped.Inc()
	}
}

// CallFailure is one call that failed, as [Metrics.Calls] reports it.
type CallFailure struct {
	At       time.Time `json:"at"`
	Upstream string    `json:"upstream"`
	Tool     string    `json:"tool"`
	Kind     string    `json:"kind"` // an UpstreamError kind, or "tool_error" for an isError result
}

// Call is one tool call through the hub, as [Metrics.RecentCalls] reports
// it.
type Call struct {
	At       time.Time     `json:"at"`
	Upstream string        `json:"upstream"`
	Tool     string        `json:"tool"`
	Dur      time.Duration `json:"dur"`
	Kind     string        `json:"kind,omitempty"` // "" when the tool ran, "tool_error" for an isError result, else an UpstreamError kind
}

// How many failures Calls keeps, and how many calls RecentCalls keeps.
const (
	recentFailures  = 10
	recentCallsKept = 50
)

// callRecord counts the calls through the hub and keeps the latest ones and
// the latest failures, for a gateway's status. Safe for concurrent use.
type callRecord struct {
	mu             sync.Mutex
	served, failed uint64
	cancelled      uint64        // by the client: not failures
	failures       []CallFailure // oldest first, at most recentFailures
	calls          []Call        // a ring of at most recentCallsKept
	next           int           // the ring's oldest call, once it is full
}

// done records call c; a failure names the tool by its label.
func (l *callRecord) done(c Call, label string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.calls) < recentCallsKept {
		l.calls = append(l.calls, c)
	} else {
		l.calls[l.next] = c
		l.next = (l.next + 1) % recentCallsKept
	}
	l.served++
	switch c.Kind {
	case "":
	case string(call.KindCancelled): // the client gave up: not a failure
		l.cancelled++
	default:
		l.fail(c.Upstream, label, c.Kind)
	}
}

// fail records a failure, with l.mu held.
func (l *callRecord) fail(upstream, tool, kind string) {
	l.failed++
	if len(l.failures) == recentFailures {
		l.failures = append(l.failures[:0], l.failures[1:]...)
	}
	l.failures = append(l.failures, CallFailure{At: time.Now().UTC(), Upstream: upstream, Tool: tool, Kind: kind})
}

// newest is the i-th latest call, with l.mu held.
func (l *callRecord) newest(i int) *Call { return &l.calls[(l.next+len(l.calls)-1-i)%len(l.calls)] }

// toolError records an isError result of the latest call of tool that ran.
func (l *callRecord) toolError(upstream, tool string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.fail(upstream, tool, "tool_error")
	for i := range l.calls {
		if c := l.newest(i); c.Upstream == upstream && c.Tool == tool && c.Kind == "" {
			c.Kind = "tool_error"
			return
		}
	}
}

// Calls returns the number of tool calls through the hub, how many failed
// (a router error or an isError result, not a call the client cancelled:
// see [Metrics.Cancelled]), and the latest failures, oldest first. A nil
// *Metrics reports nothing.
func (m *Metrics) Calls() (served, failed uint64, recent []CallFailure) {
	if m == nil {
		return 0, 0, nil
	}
	m.log.mu.Lock()
	defer m.log.mu.Unlock()
	return m.log.served, m.log.failed, slices.Clone(m.log.failures)
}

// Cancelled returns how many tool calls through the hub the client
// cancelled before they ended. A nil *Metrics reports none.
func (m *Metrics) Cancelled() uint64 {
	if m == nil {
		return 0
	}
	m.log.mu.Lock()
	defer m.log.mu.Unlock()
	return m.log.cancelled
}

// RecentCalls returns the latest tool calls through the hub, newest first
// (at most 50). A nil *Metrics reports none.
func (m *Metrics) RecentCalls() []Call {
	if m == nil {
		return nil
	}
	m.log.mu.Lock()
	defer m.log.mu.Unlock()
	out := make([]Call, len(m.log.calls))
	for i := range out {
		out[i] = *m.log.newest(i)
	}
	return out
}
