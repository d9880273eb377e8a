package proxy

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcp-router/mcp-router/audit"
	"github.com/mcp-router/mcp-router/proxy/call"
	"github.com/mcp-router/mcp-router/proxy/frontdoor"
	"github.com/mcp-router/mcp-router/state"
)

// Every route to a tool leaves one audit record, in the file and the
// state store: a direct call, call_tool, each plan step (with its plan and
// step), a refused call (with its kind). Each names its principal (the
// token's fingerprint, never the token) and session, and holds the sizes
// of the arguments and the result but never their values.
func TestAuditRecordsEveryRoute(t *testing.T) {
	db, file, log := auditedState(t)
	bobQuota := Quota{Principal: frontdoor.TokenFingerprint("bob-token"), Tool: "alpha_pid", CallsPerMinute: 1}
	alice, bob := twoTokenGateway(t, Options{Audit: log, Quotas: []Quota{bobQuota}})

	secret := map[string]any{"text": "s3cret-value"}
	wantServed(t, "direct", alice.call(t, "alpha_echo", secret))
	wantServed(t, "call_tool", alice.call(t, "call_tool", map[string]any{"name": "alpha_echo", "arguments": secret}))
	alice.call(t, "run_plan", map[string]any{"on_error": "continue", "steps": []any{
		map[string]any{"id": "first", "tool": "alpha_echo", "args": secret},
		map[string]any{"id": "second", "tool": "alpha_fail", "depends_on": []any{"first"}}}})
	wantServed(t, "bob's call", bob.call(t, "alpha_pid", nil))
	wantRefusedKind(t, "bob past his quota", bob.call(t, "alpha_pid", nil), call.KindQuotaExceeded)
	if err := log.Close(); err != nil { // writes what is queued
		t.Fatal(err)
	}

	recs, err := db.Audit().Query(context.Background(), audit.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	type row struct{ principal, tool, plan, step, outcome string }
	var got []row
	a, b := frontdoor.TokenFingerprint("alice-token"), frontdoor.TokenFingerprint("bob-token")
	var plan string
	for _, r := range recs {
		if r.Plan != "" {
			plan = r.Plan
		}
		got = append(got, row{r.Principal, r.Tool, r.Plan, r.Step, r.Outcome})
		if r.Session == "" || r.Upstream != "alpha" || r.Duration <= 0 || r.Time.IsZero() || r.ResponseBytes <= 0 && r.Outcome != string(call.KindQuotaExceeded) {
			t.Errorf("record %+v: want a session, upstream alpha, a duration, a time and response bytes", r)
		}
		if r.Tool == "alpha_echo" && r.RequestBytes != len(`{"text":"s3cret-value"}`) {
			t.Errorf("record %+v: request_bytes %d, want %d", r, r.RequestBytes, len(`{"text":"s3cret-value"}`))
		}
	}
	want := []row{
		{a, "alpha_echo", "", "", "ok"},
		{a, "alpha_echo", "", "", "ok"},
		{a, "alpha_echo", plan, "first", "ok"},
		{a, "alpha_fail", plan, "second", "tool_error"},
		{b, "alpha_pid", "", "", "ok"},
		{b, "alpha_pid", "", "", "quota_exceeded"},
	}
	if plan == "" || len(got) != len(want) {
		t.Fatalf("records %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("record %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	if recs[0].Session != recs[1].Session || recs[0].Session == recs[4].Session {
		t.Errorf("sessions %q %q %q: want alice's the same, bob's another", recs[0].Session, recs[1].Session, recs[4].Session)
	}
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(raw), "\n"); n != len(want) {
		t.Errorf("%d lines in the audit file, want %d", n, len(want))
	}
	for _, leak := range []string{"s3cret", "alice-token", "bob-token"} {
		if strings.Contains(string(raw), leak) {
			t.Errorf("the audit file holds %q:\n%s", leak, raw)
		}
	}
}

// A call refused by the session's rate limit, which is answered before
// the hub, is recorded too, direct or as a plan step.
func TestAuditRecordsRateLimited(t *testing.T) {
	mem := memState(t)
	log, err := audit.Open(audit.Options{Store: mem.Audit()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { log.Close() })
	h := startHubWith(t, Options{Upstreams: []UpstreamConfig{builtinFake("alpha")}, Builtin: fakeBuiltins, Audit: log})
	c := overHTTPWith(t, ServerOptions{Hub: h, RateLimit: RateLimit{CallsPerSecond: slowRefill, Burst: 1}})
	wantServed(t, "first", c.call(t, "alpha_echo", map[string]any{"text": "a"}))
	wantRateLimited(t, "second", c.call(t, "alpha_echo", map[string]any{"text": "b"}), "alpha_echo", "alpha")
	if err := log.Close(); err != nil {
		t.Fatal(err)
	}
	recs, err := mem.Audit().Query(context.Background(), audit.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 || recs[0].Outcome != "ok" || recs[1].Outcome != string(call.KindRateLimited) ||
		recs[1].Tool != "alpha_echo" || recs[1].Upstream != "alpha" || recs[1].Principal != LocalPrincipal || recs[1].Session == "" {
		t.Errorf("records %+v, want ok then rate_limited of alpha_echo on alpha by local in a session", recs)
	}
}

// A call of a name the catalog lacks is recorded as unknown_tool, its
// name cut to a bound.
func TestAuditRecordsUnknownToolBounded(t *testing.T) {
	mem := memState(t)
	log, err := audit.Open(audit.Options{Store: mem.Audit()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { log.Close() })
	h := startHubWith(t, Options{Upstreams: []UpstreamConfig{builtinFake("alpha")}, Builtin: fakeBuiltins, Audit: log, StartWait: 1})
	waitForTool(t, h, "alpha_echo")
	long := strings.Repeat("é", 10_000)
	if _, err := h.CallTool(t.Context(), long, nil, nil); err == nil {
		t.Fatal("a call of an unknown tool succeeded")
	}
	if err := log.Close(); err != nil {
		t.Fatal(err)
	}
	recs, _ := mem.Audit().Query(context.Background(), audit.Filter{})
	if len(recs) != 1 || recs[0].Outcome != string(call.KindUnknownTool) || len(recs[0].Tool) > call.MaxToolBytes+len("…") ||
		!strings.HasPrefix(recs[0].Tool, "éé") {
		t.Errorf("records %+v, want one unknown_tool with the name cut to %d bytes", recs, call.MaxToolBytes)
	}
}

// memState is state in memory, closed when t ends.
func memState(t testing.TB) *state.DB {
	t.Helper()
	db, err := state.OpenMemory(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// auditedState is a state.db in a temporary folder and an audit log that
// writes audit.jsonl beside it and the store's records; both close when
// the test ends.
func auditedState(t *testing.T) (*state.DB, string, *audit.Log) {
	t.Helper()
	dir := t.TempDir()
	db, err := state.Open(t.Context(), state.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	file := filepath.Join(dir, "audit.jsonl")
	log, err := audit.Open(audit.Options{File: file, Store: db.Audit()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { log.Close() })
	return db, file, log
}
