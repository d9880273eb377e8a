package wire

import (
	"io"
	"sync"
)

// groupWriter writes whole messages to one writer from several goroutines,
// never interleaved. Messages that come during a write are written
// together, in order, with one Write once it ends (group commit): one
// system call and one wake-up of the reader per burst. Each write returns
// once its message is written, with that Write's error.
type groupWriter struct {
	mu      sync.Mutex
	writing bool        // a write is writing
	next    *groupBatch // the messages waiting for it, nil for none
}

// groupBatch is messages written with one Write.
type groupBatch struct {
	buf  []byte
	err  error
	done chan struct{} // closed once buf is written
}

// write writes p to w at once, or in the next batch, which the write in
// progress writes when it is done.
func (g *groupWriter) write(w io.Writer, p []byte) (int, error) {
	g.mu.Lock()
	if g.writing {
		if g.next == nil {
			g.next = &groupBatch{done: make(chan struct{})}
		}
		b := g.next
		b.buf = append(b.buf, p...)
		g.mu.Unlock()
		<-b.done
		if b.err != nil {
			return 0, b.err
		}
		return len(p), nil
	}
	g.writing = true
	g.mu.Unlock()
	n, err := w.Write(p)
	for {
		g.mu.Lock()
		b := g.next
		g.next, g.writing = nil, b != nil
		g.mu.Unlock()
		if b == nil {
			return n, err
		}
		_, b.err = w.Write(b.buf)
		close(b.done)
	}
}
