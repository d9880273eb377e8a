package state

import (
	"fmt"
	"testing"

	"github.com/mcp-router/mcp-router/audit"
)

// BenchmarkAuditAppend is what the audit writer pays per record to keep
// it in state.db, for a batch of each size (one transaction a batch).
func BenchmarkAuditAppend(b *testing.B) {
	for _, size := range []int{1, 16, 256} {
		b.Run(fmt.Sprintf("sqlite/batch=%d", size), func(b *testing.B) {
			db, err := Open(b.Context(), Options{Dir: b.TempDir()})
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			st := db.Audit()
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
		})
	}
}
