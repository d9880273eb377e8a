package upstream

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
)

// ErrUnauthorized marks a remote upstream that answered 401.
var ErrUnauthorized = errors.New("the upstream asks for authorization (HTTP 401)")

// ErrNoAnswer marks an upstream that did not answer initialize in time.
var ErrNoAnswer = errors.New("no answer to initialize")

// phase is what a connection attempt is doing.
type phase int

const (
	phaseNone         phase = iota
	phaseDialing            // starting the process, or opening the connection
	phaseInitializing       // initialize sent, no answer yet
	phaseListing            // initialized, Listing tools
)

func (u *Upstream) setPhase(p phase) {
	u.mu.Lock()
	u.phase, u.phaseSince, u.reached = p, time.Now(), p
	u.mu.Unlock()
}

// doing describes the current phase, under way for d; u.mu is held.
func (u *Upstream) doing(d time.Duration) string {
	d = d.Round(100 * time.Millisecond)
	switch u.phase {
	case phaseDialing:
		switch u.cfg.Transport {
		case TransportStdio:
			return "starting the process"
		case TransportBuiltin:
			return "starting the built-in server"
		default:
			return "connecting to " + u.cfg.host()
		}
	case phaseInitializing:
		if limit := u.connectLimit(); u.cfg.Transport == TransportStdio && d > limit {
			return fmt.Sprintf("process running and busy, no answer to initialize after %s (past its %s connect limit while busy, up to %s)",
				d, limit, connectStretch*limit)
		} else if u.cfg.Transport == TransportStdio {
			return fmt.Sprintf("process running, no answer to initialize after %s", d)
		}
		return fmt.Sprintf("connecting to %s: no answer to initialize after %s", u.cfg.host(), d)
	case phaseListing:
		return fmt.Sprintf("initialized, Listing tools for %s", d)
	}
	return ""
}

// ForModel is err's text for a model: without a remote upstream's host
// (decision 8 in docs/design.md: no internal URLs).
func (u *Upstream) ForModel(err error) error {
	if err == nil || !u.cfg.remote() {
		return err
	}
	return &scrubbedError{msg: strings.ReplaceAll(err.Error(), u.cfg.host(), "its host"), err: err}
}

// where says, for an error of a remote upstream, which host it came from,
// and marks a 401.
func (u *Upstream) where(err error) error {
	if errors.Is(err, transport.ErrUnauthorized) || errors.Is(err, transport.ErrAuthorizationRequired) ||
		errors.Is(err, transport.ErrOAuthAuthorizationRequired) {
		err = fmt.Errorf("%w: %w; %s", ErrUnauthorized, err, loginHint(u.cfg.Name))
	}
	if !u.cfg.remote() || strings.HasPrefix(err.Error(), "connecting to ") {
		return err
	}
	return fmt.Errorf("connecting to %s: %w", u.cfg.host(), WithoutURL(err))
}

// handshakeFailed says why initialize or the first listing failed, which
// took took: a child that exited (with its stderr line that explains it),
// an upstream that never answered, or the upstream's own error.
func (u *Upstream) handshakeFailed(ctx context.Context, c *Conn, tail *lineTail, err error, took time.Duration) error {
	if ctx.Err() != nil {
		return err
	}
	if u.cfg.Transport == TransportStdio && IsTransportError(err) && !errors.Is(err, context.DeadlineExceeded) {
		within(c.lost, exitWait) // the pipe closes as the child exits: wait for the exit status
	}
	select {
	case <-c.lost:
		err = c.lostErr()
		tail.wait(exitWait) // the child's last words may still be in the pipe
		lines := tail.lines()
		if line := explainingLine(lines); line != "" {
			err = fmt.Errorf("%w (stderr: %s)", err, line)
		}
		return u.npxRepair(err, lines)
	default:
	}
	if errors.Is(err, context.DeadlineExceeded) {
		u.mu.Lock()
		p := u.phase
		u.mu.Unlock()
		what := "initialize"
		if p == phaseListing {
			what = "tools/list"
		}
		return u.noAnswer(what, took)
	}
	return u.where(err)
}

// exitWait bounds the wait for a child's exit status once its pipe closed.
const exitWait = time.Second

// stderrTailLines is how many of a child's last stderr lines are kept:
// enough to reach back past a stack trace.
const stderrTailLines = 64

// lineTail keeps the last lines of a child's stderr; nil keeps nothing.
type lineTail struct {
	max  int
	eof  chan struct{} // closed when the stderr pipe ended
	once sync.Once

	mu    sync.Mutex
	buf   []string
	next  int
	added uint64 // lines added so far
}

func newLineTail(n int) *lineTail { return &lineTail{max: n, eof: make(chan struct{})} }

// close marks the end of the stream.
func (t *lineTail) close() {
	if t != nil {
		t.once.Do(func() { close(t.eof) })
	}
}

// wait waits up to d for the end of the stream.
func (t *lineTail) wait(d time.Duration) {
	if t != nil {
		within(t.eof, d)
	}
}

func (t *lineTail) add(line string) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.added++
	if len(t.buf) < t.max {
		t.buf = append(t.buf, line)
		return
	}
	t.buf[t.next] = line
	t.next = (t.next + 1) % t.max
}

// lines returns the kept lines, oldest first.
func (t *lineTail) lines() []string {
	if t == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]string, 0, len(t.buf))
	out = append(out, t.buf[t.next:]...)
	return append(out, t.buf[:t.next]...)
}

// count is how many lines were added so far.
func (t *lineTail) count() uint64 {
	if t == nil {
		return 0
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.added
}
