package wire

import (
	"io"
	"os"
	"strconv"
	"syscall"
)

// Pollable returns, when in is a pipe, a reader of the same pipe whose
// reads wait in the runtime's poller rather than a blocked thread, which
// saves a thread wake-up per message; otherwise in itself. The pipe is
// reopened (/proc/self/fd) so that non-blocking mode is this reader's own,
// not the descriptor's shared with the client. done closes it.
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

// pipeFD is f's descriptor when f is a pipe, without changing its mode.
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
