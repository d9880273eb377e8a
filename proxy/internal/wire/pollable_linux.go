package wire

import (
	"io"
	"os"
	"strconv"
	"syscall"
)

// Pollable returns a reader of the same pipe as in whose reads wait in
// the runtime's poller rather than in a blocked thread, when in is a pipe
// (a stdio client's stdin, as clients start a server); otherwise in
// itself. A process's stdin is in blocking mode, so each read holds a
// thread in the kernel, and whatever the reader hands on waits for
// another thread to be woken to run it: a wake-up per message. A read
// from the poller lets the goroutine it hands a message to run at once
// on the same thread. The pipe is opened afresh (/proc/self/fd), so the
// non-blocking mode is this reader's own, never that of the descriptor
// shared with the client; a pollable reader also takes read deadlines.
// done closes what was opened.
func Pollable(in io.Reader) (r io.Reader, done func()) {
	f, ok := in.(*os.File)
	if !ok {
		return in, func() {}
	}
	fd, ok := pipeFD(f)
	if !ok {
		return in, func() {}
	}
	p, err := os.OpenFile("/proc/self/fd/"+strconv.Itoa(fd), os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return in, func() {}
	}
	return p, func() { p.Close() }
}

// pipeFD is f's descriptor when f is a pipe, read without changing its
// mode (as f.Fd would).
func pipeFD(f *os.File) (fd int, ok bool) {
	rc, err := f.SyscallConn()
	if err != nil {
		return 0, false
	}
	err = rc.Control(func(d uintptr) {
		var st syscall.Stat_t
		fd, ok = int(d), syscall.Fstat(int(d), &st) == nil && st.Mode&syscall.S_IFMT == syscall.S_IFIFO
	})
	return fd, ok && err == nil
}
