package audit

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"
)

// Options configures Open. Zero values take the defaults in brackets.
type Options struct {
	File     string // the JSON-lines file records are appended to; "" writes none
	MaxBytes int64  // the size past which File is rotated [DefaultMaxBytes]
	Keep     int    // rotated files kept, File.1 the newest [DefaultKeep]
	Store    Store  // also keeps the records, when set
	// Queue is how many records may wait for the writer; past it Record
	// waits: calls slow down rather than go unrecorded [DefaultQueue].
	Queue        int
	StoreTimeout time.Duration // bounds one write to Store [5s]
	// Linger is how long the writer waits after a record for more to write
	// with it, as one write of many costs about what one of one does
	// [DefaultLinger]; a negative value writes at once.
	Linger time.Duration
	// Spool is this process's own file for the records Store could not
	// take, written to it once it takes writes again; "" keeps none, and
	// such records are dropped (counted, logged).
	Spool      string
	SpoolRetry time.Duration // how often spooled records are retried [DefaultSpoolRetry]
	// Adopt are the spools of exited processes, written to Store before
	// this one's and then removed.
	Adopt []string
	// OnDrop is called for each record dropped (nil: none).
	OnDrop func()
	// Logger receives warnings, at most one of each kind a minute; nil is
	// silent.
	Logger *slog.Logger
}

// Defaults of Options.
const (
	DefaultMaxBytes   = 64 << 20
	DefaultKeep       = 5
	DefaultQueue      = 4096
	DefaultLinger     = 50 * time.Millisecond
	DefaultSpoolRetry = 10 * time.Second
)

// maxBatch is how many records the writer takes from the queue at once.
const maxBatch = 256

func (o *Options) defaults() {
	o.MaxBytes = cmp.Or(max(o.MaxBytes, 0), DefaultMaxBytes)
	o.Keep = cmp.Or(max(o.Keep, 0), DefaultKeep)
	o.Queue = cmp.Or(max(o.Queue, 0), DefaultQueue)
	o.StoreTimeout = cmp.Or(max(o.StoreTimeout, 0), 5*time.Second)
	o.SpoolRetry = cmp.Or(max(o.SpoolRetry, 0), DefaultSpoolRetry)
	o.Linger = cmp.Or(o.Linger, DefaultLinger) // negative: no linger
	o.Logger = cmp.Or(o.Logger, slog.New(slog.DiscardHandler))
}

// Log takes records and writes them in batches from a goroutine it owns,
// off the callers' path. Close writes everything queued and stops it.
type Log struct {
	opts Options
	file *rotator // nil without a file

	mu      sync.RWMutex // guards closed against sends on a closed queue
	closed  bool
	queue   chan Record
	done    chan struct{}
	closing chan struct{} // closed when Close begins, to cut a linger short

	spool     spool // the writer's alone
	dropped   atomic.Uint64
	dropWarn  rate.Sometimes // each at most once a minute
	writeWarn rate.Sometimes
}

// Open starts a log; its file, when set, is created (0600) or appended
// to, and its directory must exist.
func Open(opts Options) (*Log, error) {
	opts.defaults()
	l := &Log{opts: opts, queue: make(chan Record, opts.Queue), done: make(chan struct{}), closing: make(chan struct{}),
		dropWarn: rate.Sometimes{Interval: time.Minute}, writeWarn: rate.Sometimes{Interval: time.Minute}}
	if opts.File != "" {
		f, err := openRotator(opts.File, opts.MaxBytes, opts.Keep)
		if err != nil {
			return nil, fmt.Errorf("audit file: %w", err)
		}
		l.file = f
	}
	l.spool = spool{path: opts.Spool, adopt: opts.Adopt}
	if st, err := os.Stat(opts.Spool); opts.Spool != "" && err == nil {
		l.spool.size = st.Size()
	}
	go l.run()
	return l, nil
}

// Record queues r, waiting for room when the queue is full: the writer
// always drains it, so a record is never dropped for want of room. A
// record after Close is dropped (counted).
func (l *Log) Record(r Record) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if !l.closed {
		l.queue <- r
		return
	}
	l.drop(1, "it came after the log closed")
}

// drop counts n records dropped, and logs why (at most once a minute).
func (l *Log) drop(n int, why string) {
	total := l.dropped.Add(uint64(n))
	if l.opts.OnDrop != nil {
		for range n {
			l.opts.OnDrop()
		}
	}
	l.dropWarn.Do(func() {
		l.opts.Logger.Warn("audit records dropped: "+why, "dropped_total", total, "queue", l.opts.Queue)
	})
}

// Dropped is how many records were dropped.
func (l *Log) Dropped() uint64 { return l.dropped.Load() }

// Close writes the queued records and stops the writer.
func (l *Log) Close() error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		<-l.done
		return nil
	}
	l.closed = true
	close(l.closing)
	close(l.queue)
	l.mu.Unlock()
	<-l.done
	if l.file != nil {
		return l.file.close()
	}
	return nil
}

func (l *Log) run() {
	defer close(l.done)
	batch := make([]Record, 0, maxBatch)
	var linger *time.Timer
	if l.opts.Linger > 0 {
		linger = time.NewTimer(l.opts.Linger)
		linger.Stop()
		defer linger.Stop()
	}
	retryTimer := time.NewTimer(l.opts.SpoolRetry)
	retryTimer.Stop()
	defer retryTimer.Stop()
	for {
		var retry <-chan time.Time // armed only while records wait in the spool
		if l.spool.pending() {
			retryTimer.Reset(l.opts.SpoolRetry)
			retry = retryTimer.C
		}
		select {
		case r, ok := <-l.queue:
			if !ok {
				if l.spool.pending() {
					l.write(nil) // a last try of the spooled records
				}
				return
			}
			batch = l.collect(append(batch[:0], r), linger)
			l.write(batch)
		case <-retry:
			l.write(nil)
		}
	}
}

// collect adds to batch what the queue holds, up to maxBatch, and with a
// linger what came until it fires (or Close begins).
func (l *Log) collect(batch []Record, linger *time.Timer) []Record {
	batch, open := l.drain(batch)
	if !open || linger == nil || len(batch) == maxBatch {
		return batch
	}
	linger.Reset(l.opts.Linger)
	select {
	case <-linger.C:
	case <-l.closing:
		linger.Stop()
	}
	batch, _ = l.drain(batch)
	return batch
}

// drain adds what the queue holds now to batch, up to maxBatch; open is
// false once the queue is closed and empty.
func (l *Log) drain(batch []Record) (_ []Record, open bool) {
	for len(batch) < maxBatch {
		select {
		case r, ok := <-l.queue:
			if !ok {
				return batch, false
			}
			batch = append(batch, r)
		default:
			return batch, true
		}
	}
	return batch, true
}

func (l *Log) write(batch []Record) {
	var errs []error
	if l.file != nil {
		for _, r := range batch {
			line, err := json.Marshal(r)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if err := l.file.write(append(line, '\n')); err != nil {
				errs = append(errs, err)
				break
			}
		}
	}
	if l.opts.Store != nil {
		if err := l.store(batch); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		l.writeWarn.Do(func() { l.opts.Logger.Warn("writing audit records", "err", err, "records", len(batch)) })
	}
}

// store writes batch to the store after the records spooled before it.
// When the store fails, batch is spooled; what the spool cannot take is
// dropped, counted and logged (class 10 in docs/reliability.md).
func (l *Log) store(batch []Record) error {
	newCtx := func() (context.Context, context.CancelFunc) {
		return context.WithTimeout(context.Background(), l.opts.StoreTimeout)
	}
	err := l.spool.flush(l.opts.Store, newCtx)
	if err == nil && len(batch) > 0 {
		ctx, cancel := newCtx()
		if err = l.opts.Store.Append(ctx, batch); err != nil {
			err = fmt.Errorf("audit store: %w", err)
		}
		cancel()
	}
	if err == nil {
		return nil
	}
	left, serr := l.spool.add(batch)
	if left > 0 {
		l.drop(left, "the audit store failed and the spool is full or unset")
	}
	return errors.Join(err, serr)
}

// rotator appends to a file and, before a write would take it past max
// bytes, renames it to path.1 (path.1 to path.2, ..., dropping path.keep)
// and starts a new one. A line longer than max goes alone in its file.
type rotator struct {
	path string
	max  int64
	keep int
	f    *os.File
	size int64
}

func openRotator(path string, max int64, keep int) (*rotator, error) {
	r := &rotator{path: path, max: max, keep: keep}
	if err := r.open(); err != nil {
		return nil, err
	}
	return r, nil
}

func (r *rotator) open() error {
	f, err := os.OpenFile(r.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return err
	}
	r.f, r.size = f, st.Size()
	return nil
}

func (r *rotator) write(line []byte) error {
	if r.f == nil { // a rotation could not reopen the file: try again
		if err := r.open(); err != nil {
			return err
		}
	}
	if r.size > 0 && r.size+int64(len(line)) > r.max {
		if err := r.rotate(); err != nil {
			return fmt.Errorf("rotating %s: %w", r.path, err)
		}
	}
	n, err := r.f.Write(line)
	r.size += int64(n)
	return err
}

func (r *rotator) rotate() error {
	if err := r.f.Close(); err != nil {
		return err
	}
	r.f = nil
	name := func(i int) string { return fmt.Sprintf("%s.%d", r.path, i) }
	if err := os.Remove(name(r.keep)); err != nil && !os.IsNotExist(err) {
		return err
	}
	for i := r.keep - 1; i >= 1; i-- {
		if err := os.Rename(name(i), name(i+1)); err != nil && !os.IsNotExist(err) {
			return err
		}
	}
	if err := os.Rename(r.path, name(1)); err != nil {
		return err
	}
	return r.open()
}

func (r *rotator) close() error {
	if r.f == nil {
		return nil
	}
	return r.f.Close()
}
