package audit_test

import (
	"bufio"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/mcp-router/mcp-router/audit"
	"github.com/mcp-router/mcp-router/internal/syncbuf"
	"github.com/mcp-router/mcp-router/state"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func rec(i int) audit.Record {
	return audit.Record{Time: time.Date(2026, 3, 1, 12, 0, i, 0, time.UTC), Principal: "local", Session: "s",
		Tool: "alpha_echo", Upstream: "alpha", Outcome: "ok", Duration: time.Millisecond, RequestBytes: 10, ResponseBytes: 20}
}

func lineOf(t *testing.T, r audit.Record) []byte {
	t.Helper()
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

func readLines(t *testing.T, path string) []audit.Record {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []audit.Record
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r audit.Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("%s: %q: %v", path, sc.Text(), err)
		}
		out = append(out, r)
	}
	return out
}

// Records reach the file, one JSON line each, and the store; Close writes
// what is queued.
func TestLogWritesFileAndStore(t *testing.T) {
	dir := t.TempDir()
	mem := state.NewMemory()
	t.Cleanup(func() { mem.Close() })
	l, err := audit.Open(audit.Options{File: filepath.Join(dir, "audit.jsonl"), Store: mem.Audit()})
	if err != nil {
		t.Fatal(err)
	}
	var want []audit.Record
	for i := range 10 {
		want = append(want, rec(i))
		l.Record(rec(i))
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, readLines(t, filepath.Join(dir, "audit.jsonl"))); diff != "" {
		t.Errorf("file (-want +got):\n%s", diff)
	}
	got, err := mem.Audit().Query(context.Background(), audit.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("store (-want +got):\n%s", diff)
	}
	if st, err := os.Stat(filepath.Join(dir, "audit.jsonl")); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("file mode: %v %v, want 0600", st.Mode(), err)
	}
	l.Record(rec(11)) // after Close: dropped, no panic
	if l.Dropped() != 1 {
		t.Errorf("Dropped after a record past Close = %d, want 1", l.Dropped())
	}
}

// The file rotates when a line would take it past MaxBytes: a file of
// exactly MaxBytes stays, one byte more goes to the next; Keep rotated
// files are kept, the oldest removed.
func TestLogRotatesAtTheEdge(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.jsonl")
	n := int64(len(lineOf(t, rec(10)))) // every rec(10..49) line has this length
	l, err := audit.Open(audit.Options{File: path, MaxBytes: 2 * n, Keep: 2})
	if err != nil {
		t.Fatal(err)
	}
	for i := 10; i < 17; i++ { // 7 lines: files of 2, 2, 2 and 1 lines
		l.Record(rec(i))
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	for _, f := range []struct {
		name string
		want []int
	}{{"audit.jsonl", []int{16}}, {"audit.jsonl.1", []int{14, 15}}, {"audit.jsonl.2", []int{12, 13}}} {
		var want []audit.Record
		for _, i := range f.want {
			want = append(want, rec(i))
		}
		if diff := cmp.Diff(want, readLines(t, filepath.Join(dir, f.name))); diff != "" {
			t.Errorf("%s (-want +got):\n%s", f.name, diff)
		}
		if st, _ := os.Stat(filepath.Join(dir, f.name)); st.Size() > 2*n {
			t.Errorf("%s has %d bytes, more than max_bytes %d", f.name, st.Size(), 2*n)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "audit.jsonl.3")); !os.IsNotExist(err) {
		t.Errorf("audit.jsonl.3: %v, want it never made (keep 2)", err)
	}
	// Reopening appends to the file as it is, keeping its size.
	l, err = audit.Open(audit.Options{File: path, MaxBytes: 2 * n, Keep: 2})
	if err != nil {
		t.Fatal(err)
	}
	l.Record(rec(17))
	l.Record(rec(18))
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]audit.Record{rec(18)}, readLines(t, path)); diff != "" {
		t.Errorf("after reopening (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]audit.Record{rec(16), rec(17)}, readLines(t, path+".1")); diff != "" {
		t.Errorf("after reopening, .1 (-want +got):\n%s", diff)
	}
}

// heldStore is a real memory store whose Append waits until released, to
// hold the writer while the queue fills.
type heldStore struct {
	audit.Store
	entered chan struct{}
	release chan struct{}
	once    sync.Once
}

func (h *heldStore) Append(ctx context.Context, recs []audit.Record) error {
	h.once.Do(func() { close(h.entered); <-h.release })
	return h.Store.Append(ctx, recs)
}

// syncBuffer is a log destination safe for the writer and the test.
type syncBuffer = syncbuf.Buffer

// With the writer behind and the queue full, Record waits for room
// rather than drop the record (backpressure), and returns once the writer
// takes more; every record is written and none dropped. A record after
// Close is dropped, counted (OnDrop, Dropped) and warned of at most once
// a minute.
func TestLogQueueFullWaits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := state.NewMemory()
		defer mem.Close()
		held := &heldStore{Store: mem.Audit(), entered: make(chan struct{}), release: make(chan struct{})}
		var logs syncBuffer
		var drops atomic.Int64
		l, err := audit.Open(audit.Options{Store: held, Queue: 2, StoreTimeout: time.Hour, OnDrop: func() { drops.Add(1) },
			Logger: slog.New(slog.NewTextHandler(&logs, nil))})
		if err != nil {
			t.Fatal(err)
		}
		l.Record(rec(0))
		<-held.entered // the writer holds rec(0)
		l.Record(rec(1))
		l.Record(rec(2)) // the queue is full
		var recorded atomic.Int64
		var wg sync.WaitGroup
		for i := 3; i <= 5; i++ {
			wg.Go(func() {
				l.Record(rec(i))
				recorded.Add(1)
			})
		}
		synctest.Wait()
		if n := recorded.Load(); n != 0 || l.Dropped() != 0 {
			t.Fatalf("with the queue full: %d of 3 Record calls returned, %d dropped; want 0 and 0 (waiting)", n, l.Dropped())
		}
		close(held.release)
		wg.Wait()
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		got, _ := mem.Audit().Query(context.Background(), audit.Filter{})
		if len(got) != 6 || l.Dropped() != 0 {
			t.Errorf("after the writer caught up: %d records written, %d dropped; want 6 and 0", len(got), l.Dropped())
		}
		l.Record(rec(6))
		l.Record(rec(7))
		if l.Dropped() != 2 || drops.Load() != 2 {
			t.Errorf("two records after Close: dropped %d (OnDrop %d), want 2", l.Dropped(), drops.Load())
		}
		if n := strings.Count(logs.String(), "audit records dropped"); n != 1 {
			t.Errorf("%d warnings for 2 drops within a minute, want 1:\n%s", n, logs.String())
		}
		time.Sleep(time.Minute) // in the bubble: the fake clock moves on
		l.Record(rec(8))
		if n := strings.Count(logs.String(), "audit records dropped"); n != 2 {
			t.Errorf("%d warnings after a minute more, want 2:\n%s", n, logs.String())
		}
	})
}

// Many callers at once with a small queue and a slow store: every record
// reaches the store, none dropped, and Close returns only once all are
// written.
func TestLogBackpressureLosesNothing(t *testing.T) {
	db, err := state.Open(t.Context(), state.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	store := &batchStore{Store: db.Audit()}
	l, err := audit.Open(audit.Options{Store: store, Queue: 4, Linger: -1})
	if err != nil {
		t.Fatal(err)
	}
	const callers, each = 16, 50
	var wg sync.WaitGroup
	for c := range callers {
		wg.Go(func() {
			for i := range each {
				l.Record(rec(c*each + i))
			}
		})
	}
	wg.Wait()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := db.Audit().Query(t.Context(), audit.Filter{Limit: 2 * callers * each})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != callers*each || l.Dropped() != 0 {
		t.Errorf("%d records from %d callers through a queue of 4: %d written, %d dropped; want all, 0 dropped",
			callers*each, callers, len(got), l.Dropped())
	}
	if sizes := store.sizes(); len(sizes) >= callers*each {
		t.Errorf("%d records written in %d appends: want batches, not one append a record", callers*each, len(sizes))
	}
}

// A file in a directory that does not exist is an error naming it.
func TestLogBadFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "missing", "audit.jsonl")
	_, err := audit.Open(audit.Options{File: path})
	if err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("Open(%s) = %v, want an error naming it", path, err)
	}
}

// batchStore counts the records of each Append.
type batchStore struct {
	audit.Store
	mu      sync.Mutex
	batches []int
}

func (b *batchStore) Append(ctx context.Context, recs []audit.Record) error {
	b.mu.Lock()
	b.batches = append(b.batches, len(recs))
	b.mu.Unlock()
	return b.Store.Append(ctx, recs)
}

func (b *batchStore) sizes() []int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]int(nil), b.batches...)
}

// Records that come within the linger of the first are written to the
// store in one Append (one transaction), without waiting for Close; one
// that comes later is written on its own.
func TestLogWritesRecordsWithinTheLingerTogether(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := state.NewMemory()
		defer mem.Close()
		store := &batchStore{Store: mem.Audit()}
		l, err := audit.Open(audit.Options{Store: store})
		if err != nil {
			t.Fatal(err)
		}
		for i := range 10 {
			l.Record(rec(i))
			time.Sleep(audit.DefaultLinger / 20)
		}
		time.Sleep(audit.DefaultLinger)
		synctest.Wait()
		if got := store.sizes(); !cmp.Equal(got, []int{10}) {
			t.Errorf("appends after 10 records within the linger: got sizes %v, want [10]", got)
		}
		l.Record(rec(10))
		time.Sleep(audit.DefaultLinger)
		synctest.Wait()
		if got := store.sizes(); !cmp.Equal(got, []int{10, 1}) {
			t.Errorf("appends after one record more: got sizes %v, want [10 1]", got)
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		got, _ := mem.Audit().Query(context.Background(), audit.Filter{})
		if len(got) != 11 {
			t.Errorf("records in the store: got %d, want 11", len(got))
		}
	})
}
