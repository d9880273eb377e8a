package pgtest

import (
	"io"
	"net"
	"net/url"
	"sync"
	"testing"
)

// Relay stands between a test and its PostgreSQL server on a loopback port
// of its own, so that a test can take the server away mid-run (Down: every
// connection is cut and new ones are refused) and bring it back (Up), as
// when the server stops and restarts.
type Relay struct {
	target string // host:port of the server
	addr   string // host:port of the relay

	mu    sync.Mutex
	ln    net.Listener // nil while down
	conns map[net.Conn]struct{}
	wg    sync.WaitGroup
}

// NewRelay starts a relay to the server of dbURL and returns it with the
// URL that reaches the server through it. It is stopped when tb ends.
func NewRelay(tb testing.TB, dbURL string) (*Relay, string) {
	tb.Helper()
	u, err := url.Parse(dbURL)
	if err != nil {
		tb.Fatal(err)
	}
	r := &Relay{target: u.Host, conns: map[net.Conn]struct{}{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	r.addr = ln.Addr().String()
	r.serve(ln)
	tb.Cleanup(func() {
		r.Down()
		r.wg.Wait()
	})
	u.Host = r.addr
	return r, u.String()
}

// Down cuts every connection and refuses new ones.
func (r *Relay) Down() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ln != nil {
		r.ln.Close()
		r.ln = nil
	}
	for c := range r.conns {
		c.Close()
	}
}

// Up accepts connections again, on the same port.
func (r *Relay) Up(tb testing.TB) {
	tb.Helper()
	ln, err := net.Listen("tcp", r.addr)
	if err != nil {
		tb.Fatalf("relay up again on %s: %v", r.addr, err)
	}
	r.serve(ln)
}

func (r *Relay) serve(ln net.Listener) {
	r.mu.Lock()
	r.ln = ln
	r.mu.Unlock()
	r.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			r.relay(c)
		}
	})
}

// relay copies between c and a new connection to the server, until either
// side or Down closes them.
func (r *Relay) relay(c net.Conn) {
	s, err := net.Dial("tcp", r.target)
	if err != nil {
		c.Close()
		return
	}
	r.mu.Lock()
	if r.ln == nil { // went down meanwhile
		r.mu.Unlock()
		c.Close()
		s.Close()
		return
	}
	r.conns[c], r.conns[s] = struct{}{}, struct{}{}
	r.mu.Unlock()
	pipe := func(dst, src net.Conn) {
		io.Copy(dst, src)
		dst.Close()
		src.Close()
		r.mu.Lock()
		delete(r.conns, dst)
		delete(r.conns, src)
		r.mu.Unlock()
	}
	r.wg.Go(func() { pipe(s, c) })
	r.wg.Go(func() { pipe(c, s) })
}
