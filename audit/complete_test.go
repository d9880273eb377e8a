package audit_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcp-router/mcp-router/audit"
	"github.com/mcp-router/mcp-router/internal/pgtest"
	"github.com/mcp-router/mcp-router/state"
)

// waitFor polls cond every 10 ms until it holds or 10 s pass.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	tick, deadline := time.NewTicker(10*time.Millisecond), time.NewTimer(10*time.Second)
	defer tick.Stop()
	defer deadline.Stop()
	for !cond() {
		select {
		case <-tick.C:
		case <-deadline.C:
			t.Fatalf("waiting for %s: gave up after 10s", what)
		}
	}
}

// Calls recorded while the PostgreSQL audit store is down are spooled on
// disk and written once it is back: after the restart, the store holds
// every record, in order, and nothing was dropped.
func TestAuditCompletePostgresDownMidRun(t *testing.T) {
	relay, dbURL := pgtest.NewRelay(t, pgtest.Schema(t))
	db, err := state.OpenPostgres(t.Context(), state.PGOptions{URL: dbURL, Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	spool := filepath.Join(t.TempDir(), "audit-spool.jsonl")
	l, err := audit.Open(audit.Options{Store: db.Audit(), Spool: spool, Linger: -1, StoreTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	rec := func(i int) audit.Record {
		return audit.Record{Time: time.Unix(1_800_000_000+int64(i), 0).UTC(), Principal: "ann", Tool: fmt.Sprintf("calc_%d", i), Outcome: "ok"}
	}
	l.Record(rec(0))
	waitFor(t, "the first record in the store", func() bool { return count(t, db) == 1 })

	relay.Down()
	for i := 1; i <= 5; i++ {
		l.Record(rec(i))
	}
	waitFor(t, "the records spooled while the store is down", func() bool { return l.Dropped() == 0 && spoolHolds(t, spool, 5) })
	relay.Up(t)
	l.Record(rec(6))
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	recs, err := db.Audit().Query(context.Background(), audit.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 7 || l.Dropped() != 0 {
		t.Fatalf("after the store came back: %d records, %d dropped; want 7 and 0", len(recs), l.Dropped())
	}
	for i, r := range recs {
		if r.Tool != rec(i).Tool {
			t.Errorf("record %d: %s, want %s", i, r.Tool, rec(i).Tool)
		}
	}
}

// Without a spool, a record the store could not take is counted as
// dropped (the metric mcp_router_audit_records_dropped_total counts
// OnDrop), never lost unsaid.
func TestAuditCompleteCountsWhatItCannotKeep(t *testing.T) {
	relay, dbURL := pgtest.NewRelay(t, pgtest.Schema(t))
	db, err := state.OpenPostgres(t.Context(), state.PGOptions{URL: dbURL, Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	var counted int
	l, err := audit.Open(audit.Options{Store: db.Audit(), Linger: -1, StoreTimeout: time.Second, OnDrop: func() { counted++ }})
	if err != nil {
		t.Fatal(err)
	}
	relay.Down()
	for i := range 3 {
		l.Record(audit.Record{Time: time.Now(), Tool: fmt.Sprint("t", i), Outcome: "ok"})
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if l.Dropped() != 3 || counted != 3 {
		t.Errorf("3 records while the store is down, no spool: %d dropped, %d counted; want 3 and 3", l.Dropped(), counted)
	}
}

func count(t *testing.T, db *state.PG) int {
	recs, err := db.Audit().Query(context.Background(), audit.Filter{})
	if err != nil {
		return -1
	}
	return len(recs)
}

// spoolHolds reports whether the spool file holds n records.
func spoolHolds(t *testing.T, path string, n int) bool {
	recs, err := audit.ReadSpool(path)
	return err == nil && len(recs) == n
}

// flakyStore refuses writes while down.
type flakyStore struct {
	mu   sync.Mutex
	down bool
	recs []audit.Record
}

func (s *flakyStore) Append(ctx context.Context, recs []audit.Record) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.down {
		return errors.New("store down")
	}
	s.recs = append(s.recs, recs...)
	return nil
}

func (s *flakyStore) Query(context.Context, audit.Filter) ([]audit.Record, error) { return nil, nil }

func (s *flakyStore) held() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.recs)
}

// Spooled records reach the store once it is back even when no new call
// comes: the writer retries every SpoolRetry while records wait.
func TestAuditCompleteRetriesWithoutNewRecords(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := &flakyStore{down: true}
		spool := filepath.Join(t.TempDir(), "spool.jsonl")
		l, err := audit.Open(audit.Options{Store: store, Spool: spool, Linger: -1, SpoolRetry: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		l.Record(audit.Record{Time: time.Now(), Tool: "calc_add", Outcome: "ok"})
		synctest.Wait()
		if !spoolHolds(t, spool, 1) || store.held() != 0 {
			t.Fatalf("while the store is down: %d stored, want the record spooled and none stored", store.held())
		}
		store.mu.Lock()
		store.down = false
		store.mu.Unlock()
		time.Sleep(time.Minute) // fake time: the retry is due
		synctest.Wait()
		if store.held() != 1 || !spoolHolds(t, spool, 0) || l.Dropped() != 0 {
			t.Errorf("a minute after the store came back: %d stored, %d dropped; want 1 stored, 0 dropped and the spool empty", store.held(), l.Dropped())
		}
	})
}
