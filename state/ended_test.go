package state

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"testing"
	"time"

	"github.com/mcp-router/mcp-router/internal/pgtest"
)

// BenchmarkEndedSessions measures a DELETE's write (with its pruning) and
// a resume's lookup in a table holding 10,000 sessions ended within the
// day, on state.db and, when it is set up, PostgreSQL.
func BenchmarkEndedSessions(b *testing.B) {
	for _, bk := range []struct {
		name string
		open func(b *testing.B) EndedSessions
	}{
		{"sqlite", func(b *testing.B) EndedSessions { return openDB(b, b.TempDir()).EndedSessions() }},
		{"postgres", func(b *testing.B) EndedSessions { return openPG(b, pgtest.Schema(b)).EndedSessions() }},
	} {
		b.Run(bk.name, func(b *testing.B) {
			e := bk.open(b)
			ctx := context.Background()
			key := func(i int) [32]byte {
				var n [8]byte
				binary.LittleEndian.PutUint64(n[:], uint64(i))
				return sha256.Sum256(n[:])
			}
			for i := range 10_000 {
				if err := e.End(ctx, key(i), "alice", t0.Add(24*time.Hour), t0); err != nil {
					b.Fatal(err)
				}
			}
			b.Run("End", func(b *testing.B) {
				i := 10_000
				for b.Loop() {
					i++
					if err := e.End(ctx, key(i), "alice", t0.Add(24*time.Hour), t0); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run("Ended", func(b *testing.B) {
				i := 0
				for b.Loop() {
					i++
					if _, err := e.Ended(ctx, key(i%20_000), t0); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}
