package wire

import (
	"errors"
	"os"
	"syscall"
	"testing"
	"time"
)

// TestPollableReadsABlockingPipeInThePoller: a pipe in blocking mode, as
// a client hands a server its stdin, is read through a descriptor of its
// own in the poller (so a read takes a deadline, which a blocking one
// does not), carries the same bytes, and leaves the shared descriptor
// blocking.
func TestPollableReadsABlockingPipeInThePoller(t *testing.T) {
	var fds [2]int
	if err := syscall.Pipe(fds[:]); err != nil {
		t.Fatal(err)
	}
	stdin, w := os.NewFile(uintptr(fds[0]), "stdin"), os.NewFile(uintptr(fds[1]), "client")
	defer stdin.Close()
	defer w.Close()
	if err := stdin.SetReadDeadline(time.Now()); !errors.Is(err, os.ErrNoDeadline) {
		t.Fatalf("the blocking pipe takes a read deadline (%v): the test needs one that does not", err)
	}
	r, done := Pollable(stdin)
	defer done()
	p, ok := r.(*os.File)
	if !ok || p == stdin {
		t.Fatalf("Pollable returned %T %v, want a new *os.File", r, r)
	}
	if err := p.SetReadDeadline(time.Now().Add(time.Millisecond)); err != nil {
		t.Fatalf("read deadline on the pollable reader: %v", err)
	}
	if _, err := p.Read(make([]byte, 1)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read with nothing written: %v, want the deadline", err)
	}
	p.SetReadDeadline(time.Time{})
	if _, err := w.Write([]byte("hello\n")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 16)
	if n, err := p.Read(buf); err != nil || string(buf[:n]) != "hello\n" {
		t.Fatalf("read %q, %v; want %q", buf[:n], err, "hello\n")
	}
	flags, _, errno := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fds[0]), syscall.F_GETFL, 0)
	if errno != 0 || flags&syscall.O_NONBLOCK != 0 {
		t.Fatalf("the shared descriptor's flags %#x (%v): want it left blocking", flags, errno)
	}
}
