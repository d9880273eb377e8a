package wire

import (
	"errors"
	"runtime"
	"sync"
	"testing"
)

// gateWriter records each Write; the first blocks until release is
// closed.
type gateWriter struct {
	entered chan struct{}
	release chan struct{}
	err     error // the error of every Write after the first

	mu     sync.Mutex
	writes []string
}

func (g *gateWriter) Write(p []byte) (int, error) {
	g.mu.Lock()
	g.writes = append(g.writes, string(p))
	first := len(g.writes) == 1
	g.mu.Unlock()
	if first {
		close(g.entered)
		<-g.release
		return len(p), nil
	}
	return len(p), g.err
}

// Replies written while one is being written go to the client together,
// in one Write once it ends, and each Write returns only once its own
// message is written, with that write's error.
func TestStdioOutWritesWhatWaitsInOneWrite(t *testing.T) {
	broken := errors.New("broken pipe")
	g := &gateWriter{entered: make(chan struct{}), release: make(chan struct{}), err: broken}
	o := &stdioOut{life: &handshake{state: handshakeReady}, w: g} // its groupWriter
	first := make(chan error, 1)
	go func() { _, err := o.Write([]byte("a\n")); first <- err }()
	<-g.entered
	var wg sync.WaitGroup
	errs := make([]error, 3)
	queued := make(chan struct{}, 3)
	for i, msg := range []string{"b\n", "c\n", "d\n"} {
		// In order: each waits for the one before it to queue.
		wg.Go(func() { queued <- struct{}{}; _, errs[i] = o.Write([]byte(msg)) })
		<-queued
		for !o.queued(len("b\n") * (i + 1)) {
			runtime.Gosched() // the message is appended under the lock just after queued
		}
	}
	close(g.release)
	if err := <-first; err != nil {
		t.Errorf("first write: %v", err)
	}
	wg.Wait()
	if len(g.writes) != 2 || g.writes[0] != "a\n" || g.writes[1] != "b\nc\nd\n" {
		t.Errorf("writes to the client: %q, want [a, b c d]", g.writes)
	}
	for i, err := range errs {
		if !errors.Is(err, broken) {
			t.Errorf("write %d: %v, want the batch's error", i, err)
		}
	}
}

// queued reports whether n bytes wait for the Write in progress.
func (o *stdioOut) queued(n int) bool {
	o.g.mu.Lock()
	defer o.g.mu.Unlock()
	return o.g.next != nil && len(o.g.next.buf) == n
}
