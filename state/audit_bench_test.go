package state

import (
	"fmt"
	"testing"

	"github.com/mcp-router/mcp-router/audit"
	"github.com/mcp-router/mcp-router/internal/pgtest"
)

// BenchmarkAuditAppend is what the audit writer pays per record to keep
// it in state.db (and in PostgreSQL, when the tests have one: internal/pgtest),
// for a batch of each size (one transaction a batch).
func BenchmarkAuditAppend(b *testing.B) {
	stores := []struct {
		name string
		open func(b *testing.B) audit.Store
	}{
		{"sqlite", func(b *testing.B) audit.Store {
			db, err := Open(b.Context(), Options{Dir: b.TempDir()})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { db.Close() })
			return db.Audit()
		}},
		{"postgres", func(b *testing.B) audit.Store {
			return openPG(b, pgtest.Schema(b)).Audit()
		}},
	}
	for _, s := range stores {
		for _, size := range []int{1, 16, 256} {
			b.Run(fmt.Sprintf("%s/batch=%d", s.name, size), func(b *testing.B) {
				benchAuditAppend(b, s.open(b), size)
			})
		}
	}
}

func benchAuditAppend(b *testing.B, st audit.Store, size int) {
	batch := make([]audit.Record, size)
	for i := range batch {
		batch[i] = auditRec(i)
	}
	b.ResetTimer()
	for b.Loop() {
		if err := st.Append(b.Context(), batch); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*size), "ns/record")
}
