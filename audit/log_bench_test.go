package audit_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/mcp-router/mcp-router/audit"
	"github.com/mcp-router/mcp-router/state"
)

// BenchmarkLogRecord is what one call's audit record costs: the time in
// Record (the caller's share, caller_ns/record) and, with Close in the
// timed loop, everything the writer then does for it (ns/op): the JSON
// line in the file and the row in state.db, as a gateway writes them.
func BenchmarkLogRecord(b *testing.B) {
	dir := b.TempDir()
	db, err := state.Open(b.Context(), state.Options{Dir: dir})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	l, err := audit.Open(audit.Options{File: filepath.Join(dir, "audit.jsonl"), Store: db.Audit()})
	if err != nil {
		b.Fatal(err)
	}
	var inRecord time.Duration
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		start := time.Now()
		l.Record(rec(i % 60))
		inRecord += time.Since(start)
	}
	if err := l.Close(); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	b.ReportMetric(float64(inRecord.Nanoseconds())/float64(b.N), "caller_ns/record")
	b.ReportMetric(float64(l.Dropped()), "dropped")
}
