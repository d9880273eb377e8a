package proxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/mcp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/mcp-router/mcp-router/proxy/call"
	"github.com/mcp-router/mcp-router/proxy/internal/upstream"
)

// scrapeMetrics reads m through its Handler, as Prometheus would, and flattens
// the exposition into sample keys in text-format spelling
// (name{label="value",...}, labels sorted) and their values. A histogram
// gives name_count, name_sum and one name_bucket per bound.
func scrapeMetrics(t *testing.T, m *Metrics) map[string]float64 {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("scrape: got status %d, want 200: %s", rec.Code, rec.Body)
	}
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Fatalf("scrape: got Content-Type %q, want the text format", ct)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(rec.Body)
	if err != nil {
		t.Fatalf("scrape: parsing the exposition: %v", err)
	}
	out := map[string]float64{}
	for name, fam := range fams {
		for _, mt := range fam.GetMetric() {
			flattenMetric(out, name, fam.GetType(), mt)
		}
	}
	return out
}

func flattenMetric(out map[string]float64, name string, typ dto.MetricType, mt *dto.Metric) {
	var labels []string
	for _, lp := range mt.GetLabel() {
		labels = append(labels, fmt.Sprintf("%s=%q", lp.GetName(), lp.GetValue()))
	}
	key := func(name string, extra ...string) string {
		all := append(slices.Clone(labels), extra...)
		slices.Sort(all)
		if len(all) == 0 {
			return name
		}
		return name + "{" + strings.Join(all, ",") + "}"
	}
	switch typ {
	case dto.MetricType_COUNTER:
		out[key(name)] = mt.GetCounter().GetValue()
	case dto.MetricType_GAUGE:
		out[key(name)] = mt.GetGauge().GetValue()
	case dto.MetricType_HISTOGRAM:
		h := mt.GetHistogram()
		out[key(name+"_count")] = float64(h.GetSampleCount())
		out[key(name+"_sum")] = h.GetSampleSum()
		for _, b := range h.GetBucket() {
			le := strconv.FormatFloat(b.GetUpperBound(), 'g', -1, 64)
			out[key(name+"_bucket", fmt.Sprintf("le=%q", le))] = float64(b.GetCumulativeCount())
		}
	default:
		out[key(name)] = mt.GetUntyped().GetValue()
	}
}

// wantSamples checks that each key of want was scraped with its value.
func wantSamples(t *testing.T, got, want map[string]float64) {
	t.Helper()
	for k, v := range want {
		g, ok := got[k]
		switch {
		case !ok:
			t.Errorf("%s: missing from the scrape", k)
		case g != v:
			t.Errorf("%s: got %v, want %v", k, g, v)
		}
	}
}

// metricKeys returns the scraped keys that start with prefix.
func metricKeys(got map[string]float64, prefix string) []string {
	var keys []string
	for k := range got {
		if strings.HasPrefix(k, prefix) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

func TestMetricsFreshScrapeHasHelpTypesAndRuntime(t *testing.T) {
	m := NewMetrics()
	m.ForProfile("p") // a profile served: its gauges start at zero
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	text := rec.Body.String()
	for _, fam := range []string{
		"mcp_router_routing_duration_seconds histogram",
		"mcp_router_routing_selected_tools histogram",
		"mcp_router_routing_alerts_total counter",
		"mcp_router_discoveries_total counter",
		"mcp_router_discovery_added_tools_total counter",
		"mcp_router_discovery_evicted_tools_total counter",
		"mcp_router_breaker_trips_total counter",
		"mcp_router_sessions gauge",
		"mcp_router_sessions_opened_total counter",
		"mcp_router_belt_sessions gauge",
		"mcp_router_belt_tools gauge",
		"mcp_router_catalog_tools gauge",
		"mcp_router_plan_steps_total counter",
		"go_goroutines gauge",
	} {
		name := strings.Fields(fam)[0]
		if !strings.Contains(text, "\n# TYPE "+fam+"\n") {
			t.Errorf("no # TYPE %s in a fresh scrape", fam)
		}
		if !strings.Contains(text, "# HELP "+name+" ") {
			t.Errorf("no # HELP for %s", name)
		}
	}
	if runtime.GOOS == "linux" && !strings.Contains(text, "\nprocess_resident_memory_bytes ") {
		t.Errorf("no process collector series in a fresh scrape")
	}
	wantSamples(t, scrapeMetrics(t, m), map[string]float64{
		`mcp_router_routing_alerts_total{kind="collision"}`: 0,
		`mcp_router_routing_alerts_total{kind="no_match"}`:  0,
		`mcp_router_plan_steps_total{status="timed_out"}`:   0,
		`mcp_router_sessions`:                               0,
		`mcp_router_belt_sessions{profile="p"}`:             0,
		`mcp_router_catalog_tools{profile="p"}`:             0,
	})
}

func TestMetricsCallDone(t *testing.T) {
	tests := []struct {
		name    string
		record  func(m *Metrics)
		want    map[string]float64
		untimed bool // no latency observed
	}{
		{
			name:   "a call that ran counts as ok and is timed",
			record: func(m *Metrics) { m.CallDone("fs", "fs_read", 30*time.Millisecond, "") },
			want: map[string]float64{
				`mcp_router_tool_calls_total{outcome="ok",tool="fs_read",upstream="fs"}`: 1,
				`mcp_router_tool_call_duration_seconds_count{upstream="fs"}`:             1,
				`mcp_router_tool_call_duration_seconds_sum{upstream="fs"}`:               0.03,
				`mcp_router_tool_call_duration_seconds_bucket{le="0.025",upstream="fs"}`: 0,
				`mcp_router_tool_call_duration_seconds_bucket{le="0.05",upstream="fs"}`:  1,
				`mcp_router_tool_call_duration_seconds_bucket{le="+Inf",upstream="fs"}`:  1,
			},
		},
		{
			name: "an isError result is ok and an error result",
			record: func(m *Metrics) {
				m.CallDone("fs", "fs_read", time.Millisecond, "")
				m.ToolError("fs", "fs_read")
			},
			want: map[string]float64{
				`mcp_router_tool_calls_total{outcome="ok",tool="fs_read",upstream="fs"}`: 1,
				`mcp_router_tool_error_results_total{tool="fs_read",upstream="fs"}`:      1,
			},
		},
		{
			name:   "a timeout is its kind and timed",
			record: func(m *Metrics) { m.CallDone("web", "web_fetch", 2*time.Minute, string(call.KindTimeout)) },
			want: map[string]float64{
				`mcp_router_tool_calls_total{outcome="upstream_timeout",tool="web_fetch",upstream="web"}`: 1,
				`mcp_router_tool_call_duration_seconds_bucket{le="60",upstream="web"}`:                    0,
				`mcp_router_tool_call_duration_seconds_bucket{le="120",upstream="web"}`:                   1,
			},
		},
		{
			name: "an unknown tool's made-up name is not a label value",
			record: func(m *Metrics) {
				m.CallDone("", "hallucinated_tool_42", time.Microsecond, string(call.KindUnknownTool))
			},
			want: map[string]float64{
				`mcp_router_tool_calls_total{outcome="unknown_tool",tool="other",upstream=""}`: 1,
			},
			untimed: true,
		},
		{
			name:   "a cancelled call is counted, not timed",
			record: func(m *Metrics) { m.CallDone("web", "web_fetch", 90*time.Second, string(call.KindCancelled)) },
			want: map[string]float64{
				`mcp_router_tool_calls_total{outcome="cancelled",tool="web_fetch",upstream="web"}`: 1,
			},
			untimed: true,
		},
		{
			name:   "a blocked tool is counted, not timed",
			record: func(m *Metrics) { m.CallDone("fs", "fs_write", time.Microsecond, string(call.KindBlocked)) },
			want: map[string]float64{
				`mcp_router_tool_calls_total{outcome="tool_blocked",tool="fs_write",upstream="fs"}`: 1,
			},
			untimed: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := NewMetrics()
			tt.record(m)
			got := scrapeMetrics(t, m)
			wantSamples(t, got, tt.want)
			if timed := metricKeys(got, "mcp_router_tool_call_duration_seconds_count"); tt.untimed && len(timed) > 0 {
				t.Errorf("got latency series %v, want none", timed)
			}
			if calls := metricKeys(got, "mcp_router_tool_calls_total"); len(calls) != 1 {
				t.Errorf("got call series %v, want one", calls)
			}
		})
	}
}

func TestMetricsObserveCallReadsHubResults(t *testing.T) {
	m := NewMetrics()
	m.observeCall("fs", "fs_read", time.Millisecond, mcp.NewToolResultText("ok"), nil)
	m.observeCall("fs", "fs_read", time.Millisecond, mcp.NewToolResultError("no such file"), nil)
	m.observeCall("", "fs_read", time.Millisecond, nil,
		&UpstreamError{Kind: call.KindUnavailable, Upstream: "fs", Tool: "fs_read", Err: upstream.ErrNotConnected})
	m.observeCall("", "nope", 0, nil, &UpstreamError{Kind: call.KindUnknownTool, Tool: "nope", Err: ErrUnknownTool})
	m.observeCall("fs", "fs_read", time.Millisecond, nil, errors.New("not an UpstreamError"))
	wantSamples(t, scrapeMetrics(t, m), map[string]float64{
		`mcp_router_tool_calls_total{outcome="ok",tool="fs_read",upstream="fs"}`:                   2,
		`mcp_router_tool_error_results_total{tool="fs_read",upstream="fs"}`:                        1,
		`mcp_router_tool_calls_total{outcome="upstream_unavailable",tool="fs_read",upstream="fs"}`: 1,
		`mcp_router_tool_calls_total{outcome="unknown_tool",tool="other",upstream=""}`:             1,
		`mcp_router_tool_calls_total{outcome="upstream_error",tool="fs_read",upstream="fs"}`:       1,
		`mcp_router_tool_call_duration_seconds_count{upstream="fs"}`:                               4,
	})
}

func TestMetricsToolLabelCap(t *testing.T) {
	m := NewMetrics()
	m.tools = newToolLabels(2)
	for _, tool := range []string{"a_one", "a_two", "a_three", "a_four", "a_one"} {
		m.CallDone("a", tool, time.Millisecond, "")
	}
	m.ToolError("a", "a_five")
	m.ToolError("a", "a_two")
	got := scrapeMetrics(t, m)
	want := []string{
		`mcp_router_tool_calls_total{outcome="ok",tool="a_one",upstream="a"}`,
		`mcp_router_tool_calls_total{outcome="ok",tool="a_two",upstream="a"}`,
		`mcp_router_tool_calls_total{outcome="ok",tool="other",upstream="a"}`,
	}
	if diff := cmp.Diff(want, metricKeys(got, "mcp_router_tool_calls_total")); diff != "" {
		t.Errorf("call series past the cap (-want +got):\n%s", diff)
	}
	wantSamples(t, got, map[string]float64{
		`mcp_router_tool_calls_total{outcome="ok",tool="a_one",upstream="a"}`: 2,
		`mcp_router_tool_calls_total{outcome="ok",tool="other",upstream="a"}`: 2,
		`mcp_router_tool_error_results_total{tool="other",upstream="a"}`:      1,
		`mcp_router_tool_error_results_total{tool="a_two",upstream="a"}`:      1,
	})
}

func TestMetricsToolLabelCapDefault(t *testing.T) {
	m := NewMetrics()
	for i := range maxToolLabels + 50 {
		m.CallDone("u", fmt.Sprintf("u_tool%d", i), 0, "")
	}
	got := scrapeMetrics(t, m)
	if n := len(metricKeys(got, "mcp_router_tool_calls_total")); n != maxToolLabels+1 {
		t.Errorf("got %d call series, want %d (%d names and other)", n, maxToolLabels+1, maxToolLabels)
	}
	wantSamples(t, got, map[string]float64{`mcp_router_tool_calls_total{outcome="ok",tool="other",upstream="u"}`: 50})
}

func TestMetricsRouteDone(t *testing.T) {
	m := NewMetrics()
	m.RouteDone(300*time.Microsecond, 5, []string{"collision", "collision"})
	m.RouteDone(40*time.Millisecond, 0, []string{"no_match"})
	wantSamples(t, scrapeMetrics(t, m), map[string]float64{
		`mcp_router_routing_duration_seconds_count`:               2,
		`mcp_router_routing_duration_seconds_sum`:                 0.0403,
		`mcp_router_routing_duration_seconds_bucket{le="0.0005"}`: 1,
		`mcp_router_routing_duration_seconds_bucket{le="0.05"}`:   2,
		`mcp_router_routing_selected_tools_count`:                 2,
		`mcp_router_routing_selected_tools_sum`:                   5,
		`mcp_router_routing_selected_tools_bucket{le="0"}`:        1,
		`mcp_router_routing_selected_tools_bucket{le="4"}`:        1,
		`mcp_router_routing_selected_tools_bucket{le="5"}`:        2,
		`mcp_router_routing_alerts_total{kind="collision"}`:       2,
		`mcp_router_routing_alerts_total{kind="no_match"}`:        1,
	})
}

func TestMetricsDiscoveryAndBreaker(t *testing.T) {
	m := NewMetrics()
	m.Discovery(3, 0)
	m.Discovery(2, 1)
	m.Discovery(-1, -1) // nonsense counts are ignored, not a panic
	m.BreakerTrip()
	wantSamples(t, scrapeMetrics(t, m), map[string]float64{
		`mcp_router_discoveries_total`:             3,
		`mcp_router_discovery_added_tools_total`:   5,
		`mcp_router_discovery_evicted_tools_total`: 1,
		`mcp_router_breaker_trips_total`:           1,
	})
}

func TestMetricsSessionsAndBelts(t *testing.T) {
	m := NewMetrics().ForProfile("p")
	m.SessionOpened()
	m.SessionOpened()
	m.SessionOpened()
	m.SessionClosed()
	m.BeltSize(4, 10)
	m.BeltSize(2, 7)
	wantSamples(t, scrapeMetrics(t, m), map[string]float64{
		`mcp_router_sessions`:                   2,
		`mcp_router_sessions_opened_total`:      3,
		`mcp_router_belt_sessions{profile="p"}`: 2,
		`mcp_router_belt_tools{profile="p"}`:    7,
	})
}

func TestMetricsUpstreamState(t *testing.T) {
	upState := func(m *Metrics, upstream string) map[string]float64 {
		out := map[string]float64{}
		got := scrapeMetrics(t, m)
		for _, k := range metricKeys(got, `mcp_router_upstream_up{profile="p",state=`) {
			if strings.HasSuffix(k, `upstream="`+upstream+`"}`) {
				out[k] = got[k]
			}
		}
		return out
	}
	series := func(connecting, connected, failed, stopped float64) map[string]float64 {
		return map[string]float64{
			`mcp_router_upstream_up{profile="p",state="connecting",upstream="fs"}`: connecting,
			`mcp_router_upstream_up{profile="p",state="connected",upstream="fs"}`:  connected,
			`mcp_router_upstream_up{profile="p",state="failed",upstream="fs"}`:     failed,
			`mcp_router_upstream_up{profile="p",state="stopped",upstream="fs"}`:    stopped,
		}
	}
	m := NewMetrics().ForProfile("p")
	if got := upState(m, "fs"); len(got) != 0 {
		t.Fatalf("got %v before any state, want no series", got)
	}
	steps := []struct {
		state string
		want  map[string]float64
	}{
		{string(StateConnecting), series(1, 0, 0, 0)},
		{string(StateConnected), series(0, 1, 0, 0)},
		{string(StateFailed), series(0, 0, 1, 0)},
		{string(StateStopped), series(0, 0, 0, 1)},
		{"bogus", series(0, 0, 0, 0)},
	}
	m.UpstreamState("web", string(StateConnected))
	for _, s := range steps {
		m.UpstreamState("fs", s.state)
		if diff := cmp.Diff(s.want, upState(m, "fs")); diff != "" {
			t.Errorf("after %s (-want +got):\n%s", s.state, diff)
		}
	}
	wantSamples(t, scrapeMetrics(t, m), map[string]float64{`mcp_router_upstream_up{profile="p",state="connected",upstream="web"}`: 1})
}

func TestMetricsUpstreamRestart(t *testing.T) {
	m := NewMetrics()
	m.UpstreamRestart("fs")
	m.UpstreamRestart("fs")
	m.UpstreamRestart("web")
	wantSamples(t, scrapeMetrics(t, m), map[string]float64{
		`mcp_router_upstream_restarts_total{upstream="fs"}`:  2,
		`mcp_router_upstream_restarts_total{upstream="web"}`: 1,
	})
}

func TestMetricsPlanDone(t *testing.T) {
	m := NewMetrics()
	m.PlanDone("PARALLEL_TOOLS", 1500*time.Millisecond, map[string]int{"succeeded": 2, "failed": 1, "skipped": 0})
	m.PlanDone("PARALLEL_TOOLS", 20*time.Millisecond, map[string]int{"succeeded": 3})
	m.PlanDone("SEQUENTIAL_TOOLS", 90*time.Second, map[string]int{"timed_out": 1, "cancelled": 2})
	wantSamples(t, scrapeMetrics(t, m), map[string]float64{
		`mcp_router_plans_total{strategy="PARALLEL_TOOLS"}`:                             2,
		`mcp_router_plans_total{strategy="SEQUENTIAL_TOOLS"}`:                           1,
		`mcp_router_plan_duration_seconds_count{strategy="PARALLEL_TOOLS"}`:             2,
		`mcp_router_plan_duration_seconds_sum{strategy="PARALLEL_TOOLS"}`:               1.52,
		`mcp_router_plan_duration_seconds_bucket{le="1",strategy="PARALLEL_TOOLS"}`:     1,
		`mcp_router_plan_duration_seconds_bucket{le="2.5",strategy="PARALLEL_TOOLS"}`:   2,
		`mcp_router_plan_duration_seconds_bucket{le="120",strategy="SEQUENTIAL_TOOLS"}`: 1,
		`mcp_router_plan_steps_total{status="succeeded"}`:                               5,
		`mcp_router_plan_steps_total{status="failed"}`:                                  1,
		`mcp_router_plan_steps_total{status="skipped"}`:                                 0,
		`mcp_router_plan_steps_total{status="cancelled"}`:                               2,
		`mcp_router_plan_steps_total{status="timed_out"}`:                               1,
	})
}

func TestMetricsNilReceiverDoesNothing(t *testing.T) {
	var m *Metrics
	m.CallDone("fs", "fs_read", time.Second, "")
	m.ToolError("fs", "fs_read")
	m.observeCall("fs", "fs_read", time.Second, nil, errors.New("x"))
	m.RouteDone(time.Millisecond, 3, []string{"collision"})
	m.Discovery(1, 1)
	m.BreakerTrip()
	m.BeltSize(1, 5)
	m.CatalogSize(3)
	if m.ForProfile("p") != nil {
		t.Error("a nil *Metrics has a non-nil profile view")
	}
	m.UpstreamState("fs", string(StateConnected))
	m.UpstreamRestart("fs")
	m.PlanDone("SINGLE_TOOL", time.Second, map[string]int{"succeeded": 1})
	m.SessionOpened()
	m.SessionClosed()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusNotFound {
		t.Errorf("nil Handler: got status %d, want 404", rec.Code)
	}
}

func TestMetricsConcurrentUpdatesAndScrapes(t *testing.T) {
	m := NewMetrics()
	const workers, calls = 8, 200
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range calls {
				m.CallDone("u", fmt.Sprintf("u_t%d", i%10), time.Millisecond, "")
				m.UpstreamState("u", string(reportedStates[(w+i)%len(reportedStates)]))
				m.SessionOpened()
				m.SessionClosed()
			}
		})
	}
	for range 20 { // scrapes while the workers record
		got := scrapeMetrics(t, m)
		ones := 0.0
		for _, k := range metricKeys(got, "mcp_router_upstream_up{") {
			ones += got[k]
		}
		if ones > 1 {
			t.Errorf("a scrape saw upstream u in %v states at once", ones)
		}
	}
	wg.Wait()
	got := scrapeMetrics(t, m)
	total := 0.0
	for _, k := range metricKeys(got, "mcp_router_tool_calls_total{") {
		total += got[k]
	}
	if total != workers*calls {
		t.Errorf("got %v calls, want %d", total, workers*calls)
	}
	wantSamples(t, got, map[string]float64{`mcp_router_sessions`: 0})
}

func TestMetricsAddr(t *testing.T) {
	tests := []struct {
		addr         string
		wantHostport string
		wantLoopback bool
	}{
		{":9464", "127.0.0.1:9464", true},
		{":0", "127.0.0.1:0", true},
		{"127.0.0.1:9464", "127.0.0.1:9464", true},
		{"[::1]:9464", "[::1]:9464", true},
		{"localhost:9464", "localhost:9464", true},
		{"0.0.0.0:9464", "0.0.0.0:9464", false},
		{"[::]:9464", "[::]:9464", false},
		{"192.0.2.7:9464", "192.0.2.7:9464", false},
		{"metrics.example:9464", "metrics.example:9464", false},
	}
	for _, tt := range tests {
		hostport, loopback, err := metricsAddr(tt.addr)
		if err != nil || hostport != tt.wantHostport || loopback != tt.wantLoopback {
			t.Errorf("metricsAddr(%q): got %q, %v, %v; want %q, %v, nil", tt.addr, hostport, loopback, err, tt.wantHostport, tt.wantLoopback)
		}
	}
	if _, _, err := metricsAddr("9464"); err == nil {
		t.Errorf("metricsAddr(%q): got no error, want one", "9464")
	}
}

// metricsAddrLog is a slog handler that hands over the address ServeMetrics
// logs once it listens.
type metricsAddrLog struct{ addr chan string }

func (h metricsAddrLog) Enabled(context.Context, slog.Level) bool { return true }
func (h metricsAddrLog) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h metricsAddrLog) WithGroup(string) slog.Handler            { return h }
func (h metricsAddrLog) Handle(_ context.Context, r slog.Record) error {
	if r.Message != "serving metrics" {
		return nil
	}
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "addr" {
			h.addr <- a.Value.String()
		}
		return true
	})
	return nil
}

func TestMetricsServeStartsAndStops(t *testing.T) {
	m := NewMetrics()
	m.BreakerTrip()
	log := metricsAddrLog{addr: make(chan string, 1)}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	served := make(chan error, 1)
	go func() { served <- ServeMetrics(ctx, ":0", m, nil, slog.New(log)) }()

	var addr string
	select {
	case addr = <-log.addr:
	case err := <-served:
		t.Fatalf("ServeMetrics returned before listening: %v", err)
	}
	if host, _, _ := net.SplitHostPort(addr); host != "127.0.0.1" {
		t.Errorf("listening on %s, want loopback for an address without a host", addr)
	}
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	get := func(path string) (int, string) {
		t.Helper()
		resp, err := client.Get("http://" + addr + path)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	if code, body := get("/metrics"); code != http.StatusOK || !strings.Contains(body, "\nmcp_router_breaker_trips_total 1\n") {
		t.Errorf("GET /metrics: got %d with %.200q, want 200 with mcp_router_breaker_trips_total 1", code, body)
	}
	if code, _ := get("/"); code != http.StatusNotFound {
		t.Errorf("GET /: got %d, want 404", code)
	}

	cancel()
	if err := <-served; err != nil {
		t.Errorf("ServeMetrics after cancel: got %v, want nil", err)
	}
	if conn, err := net.Dial("tcp", addr); err == nil {
		conn.Close()
		t.Errorf("dialing %s after ServeMetrics returned: got a connection, want it refused", addr)
	}
}

func TestMetricsServeFailsOnBusyOrBadAddress(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	for _, addr := range []string{ln.Addr().String(), "no-port"} {
		if err := ServeMetrics(t.Context(), addr, NewMetrics(), nil, nil); err == nil {
			t.Errorf("ServeMetrics(%q): got nil, want an error", addr)
		}
	}
}

// Two profiles' views of one Metrics, each with an upstream named fs:
// their gauges stay apart by profile, and a counter both record sums.
func TestMetricsPerProfileViews(t *testing.T) {
	m := NewMetrics()
	a, b := m.ForProfile("alpha"), m.ForProfile("beta")
	a.UpstreamState("fs", string(StateConnected))
	b.UpstreamState("fs", string(StateFailed))
	a.BeltSize(3, 12)
	b.BeltSize(1, 2)
	a.CatalogSize(20)
	b.CatalogSize(5)
	a.CallDone("fs", "fs_read", time.Millisecond, "")
	b.CallDone("fs", "fs_read", time.Millisecond, "")
	a.SessionOpened()
	b.SessionOpened()
	got := scrapeMetrics(t, m)
	wantSamples(t, got, map[string]float64{
		`mcp_router_upstream_up{profile="alpha",state="connected",upstream="fs"}`: 1,
		`mcp_router_upstream_up{profile="alpha",state="failed",upstream="fs"}`:    0,
		`mcp_router_upstream_up{profile="beta",state="connected",upstream="fs"}`:  0,
		`mcp_router_upstream_up{profile="beta",state="failed",upstream="fs"}`:     1,
		`mcp_router_belt_sessions{profile="alpha"}`:                               3,
		`mcp_router_belt_tools{profile="alpha"}`:                                  12,
		`mcp_router_belt_sessions{profile="beta"}`:                                1,
		`mcp_router_belt_tools{profile="beta"}`:                                   2,
		`mcp_router_catalog_tools{profile="alpha"}`:                               20,
		`mcp_router_catalog_tools{profile="beta"}`:                                5,
		`mcp_router_tool_calls_total{outcome="ok",tool="fs_read",upstream="fs"}`:  2,
		`mcp_router_sessions`: 2,
	})
	if served, _, _ := m.Calls(); served != 2 {
		t.Errorf("calls served, seen from the gateway: got %d, want 2", served)
	}
}

// A tool name shaped like a secret (an upstream chose it) never becomes a
// metrics label as it is: metrics leave the process.
func TestNoSecretInMetricsLabels(t *testing.T) {
	secret := "ghp_" + strings.Repeat("aB3dE5fG7h", 4)[:36]
	labels := newToolLabels(10)
	for range 2 { // the second answer comes from the seen names
		if got := labels.label(secret); strings.Contains(got, secret[4:]) {
			t.Errorf("label %q keeps the secret", got)
		}
	}
	if got := labels.label("calculator_add"); got != "calculator_add" {
		t.Errorf("label of calculator_add: got %q", got)
	}
}
