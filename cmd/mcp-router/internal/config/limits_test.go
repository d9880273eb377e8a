package config

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcp-router/mcp-router/executor"
	"github.com/mcp-router/mcp-router/proxy"
	"github.com/mcp-router/mcp-router/proxy/results"
)

// TestBoundLimitsConfig: every bound on input from outside has a key
// under limits that reaches the package applying it; unset keys leave
// the packages' defaults; bad values name the file, the line and the key.
func TestBoundLimitsConfig(t *testing.T) {
	p := loadProfile(t, `
limits:
  upstream_message_bytes: 8MiB
  upstream_error_bytes: 32KiB
  listing_bytes: 32MB
  listing_items: 500
  plan_text_bytes: 100000
  plan_expanded_bytes: 4MiB
  plan_result_bytes: 8MiB
  plan_foreach_items: 50
  plan_calls: 60
  query_bytes: 4KiB
  note_bytes: 512
  context_bytes: 16KiB
  lessons_bytes: 1MiB
profiles:
  p:
    upstreams:
      web: {builtin: web}
`, nil)
	u := p.Upstreams[0]
	if got, want := []int{u.MaxMessageBytes, u.MaxErrorBodyBytes, u.MaxListingBytes, u.MaxListingItems}, []int{8 << 20, 32 << 10, 32 << 20, 500}; !cmp.Equal(got, want) {
		t.Errorf("upstream bounds: got %v, want %v", got, want)
	}
	cfg, err := load(t, "limits: {plan_text_bytes: 100000, plan_expanded_bytes: 4MiB, plan_result_bytes: 8MiB, plan_foreach_items: 50, plan_calls: 60, "+
		"query_bytes: 4KiB, note_bytes: 512, context_bytes: 16KiB, lessons_bytes: 1MiB, model_result_bytes: 32KiB}\nprofiles:\n  p: {}\n", nil)
	if err != nil {
		t.Fatal(err)
	}
	wantExec := executor.Options{MaxTextBytes: 100000, MaxExpandedBytes: 4 << 20, MaxResultBytes: 8 << 20, MaxForeachItems: 50, MaxCalls: 60}
	if diff := cmp.Diff(wantExec, cfg.Limits.Plan, cmp.Comparer(func(a, b executor.Options) bool {
		return a.MaxTextBytes == b.MaxTextBytes && a.MaxExpandedBytes == b.MaxExpandedBytes && a.MaxResultBytes == b.MaxResultBytes &&
			a.MaxForeachItems == b.MaxForeachItems && a.MaxCalls == b.MaxCalls
	})); diff != "" {
		t.Errorf("plan bounds (-want +got):\n%s", diff)
	}
	if got, want := cfg.Limits.Inputs, (proxy.InputLimits{MaxQueryBytes: 4 << 10, MaxNoteBytes: 512, MaxContextBytes: 16 << 10}); got != want {
		t.Errorf("input bounds: got %+v, want %+v", got, want)
	}
	if cfg.Limits.LessonsBytes != 1<<20 {
		t.Errorf("lessons_bytes: got %d, want 1 MiB", cfg.Limits.LessonsBytes)
	}
	if cfg.Limits.ModelResultBytes != 32<<10 {
		t.Errorf("model_result_bytes: got %d, want 32 KiB", cfg.Limits.ModelResultBytes)
	}
	kept, err := load(t, "limits: {result_store_bytes: 1MiB, result_store_total_bytes: 8MiB, result_ttl: 10m}\nprofiles:\n  p: {}\n", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := kept.Limits.KeptResults, (results.Options{PerPrincipal: 1 << 20, Total: 8 << 20, TTL: 10 * time.Minute}); got != want {
		t.Errorf("kept results: got %+v, want %+v", got, want)
	}
	def := loadProfile(t, "profiles:\n  p:\n    upstreams:\n      web: {builtin: web}\n", nil)
	if u := def.Upstreams[0]; u.MaxMessageBytes != 0 || u.MaxListingItems != 0 {
		t.Errorf("unset: got %d, %d; want 0 (the proxy's defaults)", u.MaxMessageBytes, u.MaxListingItems)
	}
	bad := []struct{ yaml, want string }{
		{"limits: {query_bytes: 0}\n", `profiles.yaml:1: limits.query_bytes: "0" is not a whole number, 1 or more`},
		{"limits:\n  plan_calls: many\n", `profiles.yaml:2: limits.plan_calls: "many" is not a whole number`},
		{"limits: {listing_bytes: 3TiB}\n", `limits.listing_bytes: "3TiB" is not a whole number`},
		{"limits: {lessons_bytes: 4GiB}\n", `limits.lessons_bytes: "4GiB" is not a whole number`},
		{"limits: {model_result_bytes: 0}\n", `limits.model_result_bytes: "0" is not a whole number, 1 or more`},
		{"limits: {result_store_bytes: 0}\n", `limits.result_store_bytes: "0" is not a whole number, 1 or more`},
		{"limits: {result_store_total_bytes: -1MiB}\n", `limits.result_store_total_bytes: "-1MiB" is not a whole number, 1 or more`},
		{"limits: {result_ttl: 0s}\n", `limits.result_ttl: "0s" is not a positive Go duration`},
		{"limits: {result_ttl: -1h}\n", `limits.result_ttl: "-1h" is not a positive Go duration`},
	}
	for _, b := range bad {
		_, err := load(t, b.yaml+"profiles:\n  p: {}\n", nil)
		if err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("%q: got %v, want an error containing %q", b.yaml, err, b.want)
		}
	}
}

// TestConcurrencyLimitsConfig: every cap on calls at once has a key under
// limits that reaches the package applying it; unset keys leave zero (the
// packages' defaults); bad values name the file, the line and the key.
func TestConcurrencyLimitsConfig(t *testing.T) {
	cfg, err := load(t, "limits: {stdio_calls: 64, upstream_calls: 48, upstream_queue: 96, plan_parallel: 24, plan_upstream_calls: 12, plan_foreach_calls: 6}\nprofiles:\n  p: {}\n", nil)
	if err != nil {
		t.Fatal(err)
	}
	l := cfg.Limits
	if got, want := []int{l.StdioCalls, l.UpstreamCalls, l.UpstreamQueue}, []int{64, 48, 96}; !cmp.Equal(got, want) {
		t.Errorf("stdio_calls, upstream_calls, upstream_queue: got %v, want %v", got, want)
	}
	if ex := l.Plan; ex.MaxParallel != 24 || ex.PerUpstream != 12 || ex.ForeachWidth != 6 {
		t.Errorf("plan_parallel, plan_upstream_calls, plan_foreach_calls: got %d, %d, %d; want 24, 12, 6", ex.MaxParallel, ex.PerUpstream, ex.ForeachWidth)
	}
	def, err := load(t, "profiles:\n  p: {}\n", nil)
	if err != nil {
		t.Fatal(err)
	}
	if l := def.Limits; l.StdioCalls != 0 || l.UpstreamCalls != 0 || l.UpstreamQueue != 0 || l.Plan.MaxParallel != 0 || l.Plan.PerUpstream != 0 || l.Plan.ForeachWidth != 0 {
		t.Errorf("unset: got %+v, want zeros (the packages' defaults)", l)
	}
	bad := []struct{ yaml, want string }{
		{"limits:\n  stdio_calls: 101\n", `profiles.yaml:2: limits.stdio_calls: "101" is not a whole number of calls from 1 to 100`},
		{"limits: {stdio_calls: 0}\n", `limits.stdio_calls: "0" is not a whole number of calls from 1 to 100`},
		{"limits: {upstream_calls: 0}\n", `limits.upstream_calls: "0" is not a whole number, 1 or more`},
		{"limits: {plan_upstream_calls: -2}\n", `limits.plan_upstream_calls: "-2" is not a whole number`},
	}
	for _, b := range bad {
		_, err := load(t, b.yaml+"profiles:\n  p: {}\n", nil)
		if err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("%q: got %v, want an error containing %q", b.yaml, err, b.want)
		}
	}
}

// TestQuotasConfig: limits.quotas and limits.repeat_calls reach the proxy
// (principal and tool default to "*"); bad entries name the line and the
// entry.
func TestQuotasConfig(t *testing.T) {
	cfg, err := load(t, `
limits:
  repeat_calls: 5
  quotas:
    - {principal: token-0123456789ab, tool: "github_*", calls_per_minute: 30, concurrent: 2}
    - {concurrent: 4}
profiles:
  p: {}
`, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []proxy.Quota{
		{Principal: "token-0123456789ab", Tool: "github_*", CallsPerMinute: 30, Concurrent: 2},
		{Principal: "*", Tool: "*", Concurrent: 4},
	}
	if diff := cmp.Diff(want, cfg.Limits.Quotas); diff != "" || cfg.Limits.RepeatCalls != 5 {
		t.Errorf("quotas (-want +got):\n%s\nrepeat_calls %d, want 5", diff, cfg.Limits.RepeatCalls)
	}
	bad := []struct{ yaml, want string }{
		{"limits:\n  quotas:\n    - {tool: x}\n", "profiles.yaml:3: limits.quotas[0]: sets neither calls_per_minute nor concurrent"},
		{"limits:\n  quotas:\n    - {tool: \"[\", concurrent: 1}\n", `limits.quotas[0]: tool "[" is not a valid glob`},
		{"limits:\n  quotas:\n    - {calls_per_minute: 0}\n", `limits.quotas[0].calls_per_minute: "0" is not a whole number`},
		{"limits:\n  quotas:\n    - {principal: a, callz: 1}\n", "limits.quotas[0].callz: unknown key"},
		{"limits: {repeat_calls: -1}\n", `limits.repeat_calls: "-1" is not a whole number`},
	}
	for _, b := range bad {
		_, err := load(t, b.yaml+"profiles:\n  p: {}\n", nil)
		if err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("%q: got %v, want an error containing %q", b.yaml, err, b.want)
		}
	}
}

// TestAuditConfig: the audit section takes a file, a size and a count,
// zero when unset (the audit package's defaults); bad values name the line
// and key.
func TestAuditConfig(t *testing.T) {
	cfg, err := load(t, "audit: {file: calls.jsonl, max_bytes: 8MiB, keep: 3}\nprofiles:\n  p: {}\n", nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := (Audit{File: "calls.jsonl", MaxBytes: 8 << 20, Keep: 3}); cfg.Audit != want {
		t.Errorf("audit: %+v, want %+v", cfg.Audit, want)
	}
	cfg, err = load(t, "profiles:\n  p: {}\n", nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := (Audit{}); cfg.Audit != want {
		t.Errorf("audit unset: %+v, want %+v", cfg.Audit, want)
	}
	for _, b := range []struct{ yaml, want string }{
		{"audit:\n  keep: 0\n", `profiles.yaml:2: audit.keep: "0" is not a whole number`},
		{"audit: {max_bytes: lots}\n", `audit.max_bytes: "lots" is not a whole number`},
		{"audit: {fil: x}\n", "audit.fil: unknown key"},
	} {
		_, err := load(t, b.yaml+"profiles:\n  p: {}\n", nil)
		if err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("%q: got %v, want an error containing %q", b.yaml, err, b.want)
		}
	}
}

// TestTracingConfig: tracing is off without otlp_endpoint; an endpoint
// without a path gets /v1/traces; a bad one names the line and key.
func TestTracingConfig(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{"", ""},
		{"tracing: {otlp_endpoint: \"http://127.0.0.1:4318\"}\n", "http://127.0.0.1:4318/v1/traces"},
		{"tracing: {otlp_endpoint: \"https://otel.example:443/custom/path\"}\n", "https://otel.example:443/custom/path"},
	} {
		cfg, err := load(t, tc.yaml+"profiles:\n  p: {}\n", nil)
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Tracing.OTLPEndpoint != tc.want || cfg.Tracing.ServiceName != "mcp-router" {
			t.Errorf("%q: %+v, want endpoint %q, service mcp-router", tc.yaml, cfg.Tracing, tc.want)
		}
	}
	_, err := load(t, "tracing:\n  otlp_endpoint: localhost:4318\nprofiles:\n  p: {}\n", nil)
	if want := "profiles.yaml:2: tracing.otlp_endpoint: \"localhost:4318\" is not an http(s) URL"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("bad endpoint: %v, want %q", err, want)
	}
}
