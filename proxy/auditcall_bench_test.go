package proxy

import (
	"testing"

	"github.com/mcp-router/mcp-router/audit"
	"github.com/mcp-router/mcp-router/state"
)

// BenchmarkHubCallAudit is what recording a call costs the caller: the
// same in-process call without an audit log, and with one writing to a
// file and state.db.
func BenchmarkHubCallAudit(b *testing.B) {
	for _, arm := range []string{"off", "file+sqlite"} {
		b.Run(arm, func(b *testing.B) {
			opts := Options{Upstreams: []UpstreamConfig{builtinFake("alpha")}, Builtin: fakeBuiltins}
			if arm != "off" {
				dir := b.TempDir()
				db, err := state.Open(b.Context(), state.Options{Dir: dir})
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { db.Close() })
				log, err := audit.Open(audit.Options{File: dir + "/audit.jsonl", Store: db.Audit()})
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { log.Close(); b.ReportMetric(float64(log.Dropped()), "dropped") })
				opts.Audit = log
			}
			h := startHubWith(b, opts) // closed before the log and the database: cleanups run last first
			args := map[string]any{"text": "hello"}
			b.ResetTimer()
			for b.Loop() {
				if _, err := h.CallTool(b.Context(), "alpha_echo", args, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
