package proxy

// Start-up as people see it: what an attempt to connect is doing while it
// goes on, why it failed in words a person can act on, and the tools of an
// upstream that has not connected yet.

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
)

// ErrUnauthorized marks a remote upstream that answered 401: it needs a
// token (or a new one) in its headers.
var ErrUnauthorized = errors.New("the upstream asks for authorization (HTTP 401)")

// ErrNoAnswer marks an upstream that took no notice of initialize within
// the init timeout: a hung process or server.
var ErrNoAnswer = errors.New("no answer to initialize")

// ErrStarting is returned, in an *UpstreamError of KindStarting, for a call
// of a tool whose upstream is still on its first connection attempt.
var ErrStarting = errors.New("still starting")

// phase is what a connection attempt is doing.
type phase int

const (
	phaseNone         phase = iota
	phaseDialing            // starting the process, or opening the connection
	phaseInitializing       // initialize sent, no answer yet
	phaseListing            // initialized, listing tools
)

func (u *upstream) setPhase(p phase) {
	u.mu.Lock()
	u.phase, u.phaseSince, u.reached = p, time.Now(), p
	u.mu.Unlock()
}

// doing describes the current phase, under way for d; u.mu is held.
func (u *upstream) doing(d time.Duration) string {
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
		if u.cfg.Transport == TransportStdio {
			return fmt.Sprintf("process running, no answer to initialize after %s", d)
		}
		return fmt.Sprintf("connecting to %s: no answer to initialize after %s", u.cfg.host(), d)
	case phaseListing:
		return fmt.Sprintf("initialized, listing tools for %s", d)
	}
	return ""
}

// host is an HTTP upstream's host and port, without the rest of its URL,
// which may carry a key in its path or query.
func (c UpstreamConfig) host() string {
	u, err := url.Parse(c.URL)
	if err != nil || u.Host == "" {
		return "the upstream's URL"
	}
	return u.Host
}

// forModel is err's text for a model: a remote upstream's host, which the
// log and doctor show, is left out (decision 8 in docs/design.md: no internal URLs).
func (u *upstream) forModel(err error) error {
	if err == nil || (u.cfg.Transport != TransportStreamableHTTP && u.cfg.Transport != TransportSSE) {
		return err
	}
	return &scrubbedError{msg: strings.ReplaceAll(err.Error(), u.cfg.host(), "its host"), err: err}
}

// where says, for an error of a remote upstream, which host it came from,
// and marks a 401.
func (u *upstream) where(err error) error {
	if errors.Is(err, transport.ErrUnauthorized) || errors.Is(err, transport.ErrAuthorizationRequired) ||
		errors.Is(err, transport.ErrOAuthAuthorizationRequired) {
		err = fmt.Errorf("%w: %w; %s", ErrUnauthorized, err, loginHint(u.cfg.Name))
	}
	if u.cfg.Transport != TransportStreamableHTTP && u.cfg.Transport != TransportSSE {
		return err
	}
	if strings.HasPrefix(err.Error(), "connecting to ") {
		return err
	}
	return fmt.Errorf("connecting to %s: %w", u.cfg.host(), withoutURL(err))
}

// handshakeFailed says why initialize or the first listing failed: a child
// that exited (with its last stderr line), an upstream that never
// answered, or the upstream's own error.
func (u *upstream) handshakeFailed(ctx context.Context, c *conn, tail *lineTail, err error) error {
	if ctx.Err() != nil {
		return err
	}
	if u.cfg.Transport == TransportStdio && isTransportError(err) && !errors.Is(err, context.DeadlineExceeded) {
		// The pipe closes as the child exits: wait for the exit status.
		t := time.NewTimer(exitWait)
		defer t.Stop()
		select {
		case <-c.lost:
		case <-t.C:
		}
	}
	select {
	case <-c.lost:
		err = c.lostErr()
		tail.wait(exitWait) // the child's last words may still be in the pipe
		if last := tail.last(); last != "" {
			return fmt.Errorf("%w (last stderr line: %s)", err, last)
		}
		return err
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
		if u.cfg.Transport == TransportStdio {
			return fmt.Errorf("process running, %w after %s (waiting for %s)", ErrNoAnswer, u.hub.opts.InitTimeout, what)
		}
		return fmt.Errorf("connecting to %s: %w after %s (waiting for %s)", u.cfg.host(), ErrNoAnswer, u.hub.opts.InitTimeout, what)
	}
	return u.where(err)
}

// exitWait bounds the wait for a child's exit status once its pipe closed.
const exitWait = time.Second

// stderrTailLines is how many of a child's last stderr lines are kept.
const stderrTailLines = 5

// lineTail keeps the last lines of a child's stderr (each already cut to
// maxLogLine by logLines). Its methods are nil-safe: nil keeps nothing.
type lineTail struct {
	max  int
	eof  chan struct{} // closed when the stderr pipe ended
	once sync.Once

	mu   sync.Mutex
	buf  []string
	next int
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
	if t == nil {
		return
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-t.eof:
	case <-timer.C:
	}
}

func (t *lineTail) add(line string) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
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

func (t *lineTail) last() string {
	l := t.lines()
	if len(l) == 0 {
		return ""
	}
	return l[len(l)-1]
}

// awaitTool is for a name not in the catalog. When the name has the prefix
// of an upstream that has not connected yet, it waits up to StartWait for
// that upstream's first attempt to end, and says why the tool is missing
// if it still is: the upstream is still starting, or failed to connect.
// It returns nil when the tool is there now, or is nobody's.
func (h *Hub) awaitTool(ctx context.Context, name string) *UpstreamError {
	deadline := time.Now().Add(h.opts.StartWait)
	if ctx.Value(startWaitedCtxKey{}) != nil {
		deadline = time.Now() // it waited already
	}
	return h.awaitToolUntil(ctx, name, deadline)
}

func (h *Hub) awaitToolUntil(ctx context.Context, name string, deadline time.Time) *UpstreamError {
	u := h.pendingOwner(name)
	if u == nil {
		return nil
	}
	if u.starting() {
		t := time.NewTimer(time.Until(deadline))
		defer t.Stop()
		select {
		case <-u.first:
		case <-t.C:
		case <-ctx.Done():
			return &UpstreamError{Kind: KindCancelled, Upstream: u.cfg.Name, Tool: name, Err: ctx.Err()}
		}
	}
	if _, ok := h.Catalog().Tool(name); ok {
		return nil
	}
	st := u.status()
	switch {
	case st.Starting:
		err := fmt.Errorf("%w for %s", ErrStarting, time.Since(st.Since).Round(time.Second))
		if st.Doing != "" {
			err = fmt.Errorf("%w (%s)", err, st.Doing)
		}
		return &UpstreamError{Kind: KindStarting, Upstream: u.cfg.Name, Tool: name, Err: fmt.Errorf("%w; try again shortly", err)}
	case st.EverConnected:
		return nil // it connected: the tool is just not one of its
	case st.Cause == nil:
		return &UpstreamError{Kind: KindUnavailable, Upstream: u.cfg.Name, Tool: name, Err: ErrNotConnected}
	case needsLogin(st.Cause):
		return &UpstreamError{Kind: KindAuthRequired, Upstream: u.cfg.Name, Tool: name,
			Err: fmt.Errorf("%w: %w", ErrNotConnected, u.forModel(st.Cause))}
	default:
		return &UpstreamError{Kind: KindUnavailable, Upstream: u.cfg.Name, Tool: name,
			Err: fmt.Errorf("%w: %w", ErrNotConnected, u.forModel(st.Cause))}
	}
}

// AwaitTools waits, as a call does, for the upstreams of the named tools
// that are not in the catalog because their upstream is still starting
// (all within one StartWait). It returns why tools are still missing.
func (h *Hub) AwaitTools(ctx context.Context, names []string) error {
	deadline := time.Now().Add(h.opts.StartWait)
	var errs []error
	for _, name := range names {
		if _, ok := h.Catalog().Tool(name); ok {
			continue
		}
		if err := h.awaitToolUntil(ctx, name, deadline); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// pendingOwner is the upstream that has never connected (or is still
// publishing its first listing) whose prefix name has (the longest such
// prefix), or nil.
func (h *Hub) pendingOwner(name string) *upstream {
	var best *upstream
	for _, u := range h.upstreams {
		if !strings.HasPrefix(name, u.cfg.Prefix) || (best != nil && len(u.cfg.Prefix) <= len(best.cfg.Prefix)) {
			continue
		}
		u.mu.Lock()
		never := u.connectedAt.IsZero()
		u.mu.Unlock()
		if never || u.starting() { // connected, its catalog not yet published
			best = u
		}
	}
	return best
}

// startWaitedCtxKey marks the context of a call that has waited for its
// upstream already (see startWaited).
type startWaitedCtxKey struct{}
