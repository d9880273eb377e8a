package upstream

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"

	"github.com/mcp-router/mcp-router/proxy/upstreamauth"
)

// ErrUnauthorized marks a remote upstream that answered 401.
var ErrUnauthorized = errors.New("the upstream asks for authorization (HTTP 401)")

// ErrNoAnswer marks an upstream that did not answer initialize in time.
var ErrNoAnswer = errors.New("no answer to initialize")

// lastingRetry is the wait before the next attempt of a start that cannot
// fix itself (cannotFixItself), in place of the backoff's 30 s cap: each
// npx attempt of a misspelt package costs about 0.45 s of CPU and a
// registry request, and nothing changes until the person edits the
// profile (which restarts the upstream) or runs mcp-router reload (Retry).
const lastingRetry = 5 * time.Minute

// errLasting marks a failed start that cannot fix itself.
var errLasting = errors.New("cannot fix itself")

// cannotFixItself reports whether a failed start fails the same way until
// someone acts: the command is not found, or npm answered E404 (no such
// package) for an npx argument.
func cannotFixItself(err error, stderr []string) bool {
	var pathErr *os.PathError
	if errors.Is(err, exec.ErrNotFound) || errors.As(err, &pathErr) && pathErr.Op == "fork/exec" && errors.Is(err, os.ErrNotExist) {
		return true
	}
	return slices.ContainsFunc(stderr, func(l string) bool { return strings.Contains(l, "code E404") })
}

// attemptStderr is the current attempt's child's last stderr lines.
func (u *Upstream) attemptStderr() []string {
	u.mu.Lock()
	tail := u.stderr
	u.mu.Unlock()
	return tail.lines()
}

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
				d, limit, ConnectStretch*limit)
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
	if NeedsLogin(err) && !errors.Is(err, ErrUnauthorized) {
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
		within(c.lost, 2*exitWait) // the pipe closes as the child exits: wait for how it ended
	}
	select {
	case <-c.lost:
		return u.npxRepair(c.lostErr(), tail.lines())
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

// exitWait bounds each wait for an ending child: for its exit status once
// its pipe closed, and for the last of its stderr once it exited.
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

// NeedsLogin reports whether err is an upstream's 401.
func NeedsLogin(err error) bool {
	return errors.Is(err, ErrUnauthorized) || errors.Is(err, transport.ErrAuthorizationRequired) ||
		errors.Is(err, transport.ErrOAuthAuthorizationRequired) || errors.Is(err, transport.ErrUnauthorized)
}

// loginHint says how to log in to the upstream named name.
func loginHint(name string) string {
	return "run `" + upstreamauth.LoginCommand(name, "") + "` to log in, or put a token in its headers"
}

// AuthRequired is err, a 401 of the upstream cfg to a call of principal
// ("" for a call with none), with the command that logs in: the caller's
// own login with auth.per_user.
func AuthRequired(principal string, cfg Config, err error) error {
	if cfg.Auth != nil && cfg.Auth.PerUser && principal != "" {
		return fmt.Errorf("%w; this upstream takes a login per caller: run `%s`", err, upstreamauth.LoginCommand(cfg.Name, principal))
	}
	return fmt.Errorf("%w; %s", err, loginHint(cfg.Name))
}

// withAuthorizer gives an HTTP upstream with an Authorizer, and no
// Authorization header of its own, its login's token on each request.
func withAuthorizer(cfg Config) (transport.HTTPHeaderFunc, bool) {
	if cfg.Authorizer == nil {
		return nil, false
	}
	for k := range cfg.Headers {
		if http.CanonicalHeaderKey(k) == "Authorization" {
			return nil, false
		}
	}
	return cfg.Authorizer.Header, true
}

// A first `npx -y` (or `uvx`) run installs its package before the server
// reads its stdin, which takes seconds on a fast link and minutes on a
// slow one. So when the connect limit passes with no answer, a stdio child
// that showed a sign of life during it (stderr, or on Linux CPU time or
// bytes read and written by its tree) gets another limit, up to
// ConnectStretch in all; a child that did nothing is judged hung. Remote
// upstreams show no such signs: their limit is fixed.

// DefaultConnectTimeout is the connect limit when nothing sets one.
const DefaultConnectTimeout = 60 * time.Second

// ConnectStretch bounds the limits a busy stdio child is given in all:
// its first attempt may last ConnectStretch connect limits.
const ConnectStretch = 5

// connectLimit is the upstream's limit on one connection attempt.
func (u *Upstream) connectLimit() time.Duration {
	if u.cfg.ConnectTimeout > 0 {
		return u.cfg.ConnectTimeout
	}
	return u.env.InitTimeout
}

// MaxFirstAttempt is the longest the upstream's first attempt may last:
// its connect limit, stretched for a stdio child busy starting.
func (u *Upstream) MaxFirstAttempt() time.Duration {
	if u.cfg.Transport == TransportStdio {
		return ConnectStretch * u.connectLimit()
	}
	return u.connectLimit()
}

// withConnectLimit bounds initialize and the first listing on c by the
// connect limit, stretched while c's child shows signs of life.
func (u *Upstream) withConnectLimit(ctx context.Context, c *Conn) (*idleContext, context.CancelFunc) {
	limit := u.connectLimit()
	if c.work == nil {
		return withCallTimeouts(ctx, limit, limit)
	}
	lc, cancel := withCallTimeouts(ctx, limit, ConnectStretch*limit)
	last := c.work()
	lc.mu.Lock()
	lc.alive = func() bool {
		now := c.work()
		changed := now != last
		last = now
		if changed {
			u.logger.Info("upstream still starting, and busy: given longer", "limit", limit)
		}
		return changed
	}
	lc.mu.Unlock()
	return lc, cancel
}

// noAnswer says that the upstream did not answer what within the limit.
func (u *Upstream) noAnswer(what string, took time.Duration) error {
	limit := u.connectLimit()
	after := limit.String()
	if more := took - limit; more >= time.Second {
		after = fmt.Sprintf("%s and %s more while it showed signs of life", limit, more.Round(time.Second))
	}
	if u.cfg.Transport == TransportStdio {
		return fmt.Errorf("process running, %w after %s (waiting for %s; connect_timeout sets the limit)", ErrNoAnswer, after, what)
	}
	return fmt.Errorf("connecting to %s: %w after %s (waiting for %s)", u.cfg.host(), ErrNoAnswer, after, what)
}

// An `npx -y` install cut short can leave <cache>/_npx/<hash>
// half-installed, and every later start then fails the same way. The
// folder is only a cache: the upstream removes it once on its own (see
// Upstream.npxRepair) and otherwise says which folder to remove.

// npxBroken matches what a half-installed npx folder makes Node or npm say.
var npxBroken = regexp.MustCompile(`Cannot find (package|module)|ERR_MODULE_NOT_FOUND|ENOTEMPTY|EEXIST`)

// npxDir matches an npx install folder in a path: <cache>/_npx/<hash>.
var npxDir = regexp.MustCompile(`((?:[A-Za-z]:)?[^\s'"]*?[/\\]_npx[/\\][0-9a-f]{8,64})(?:[/\\'"\s]|$)`)

// npxHash matches the name of an npx install folder.
var npxHash = regexp.MustCompile(`^[0-9a-f]{8,64}$`)

// brokenNpxDir returns the npx install folder a failed start's stderr
// blames, or "" when it blames none.
func brokenNpxDir(stderr []string) string {
	for _, l := range stderr {
		if !npxBroken.MatchString(l) {
			continue
		}
		if m := npxDir.FindStringSubmatch(l); m != nil {
			return strings.TrimPrefix(m[1], "file://")
		}
	}
	return ""
}

// removeNpxDir removes dir, named in a child's stderr, after checking that
// it is an npx install folder: an absolute path to a real folder (not a
// link) named by a hex hash inside a folder named _npx.
func removeNpxDir(dir string) error {
	clean := filepath.Clean(dir)
	if !filepath.IsAbs(clean) || filepath.Base(filepath.Dir(clean)) != "_npx" || !npxHash.MatchString(filepath.Base(clean)) {
		return fmt.Errorf("%s is not an npx install folder", dir)
	}
	if real, err := filepath.EvalSymlinks(clean); err != nil || real != clean {
		return fmt.Errorf("%s is not an npx install folder (a link, or gone)", dir)
	}
	info, err := os.Lstat(clean)
	if err != nil || !info.IsDir() {
		return fmt.Errorf("%s is not an npx install folder", dir)
	}
	return os.RemoveAll(clean)
}

// npxCacheError is a start that failed in a half-installed npx folder.
type npxCacheError struct {
	dir     string
	cleared bool // the folder was removed, for a clean retry
	err     error
}

func (e *npxCacheError) Error() string {
	if e.cleared {
		return fmt.Sprintf("%v: npx's install folder %s was half-installed; removed it, the next start installs afresh", e.err, e.dir)
	}
	return fmt.Sprintf("%v: npx's install folder %s looks half-installed: remove it with `rm -rf %s` and start again", e.err, e.dir, e.dir)
}

func (e *npxCacheError) Unwrap() error { return e.err }

// npxRepair explains err, a start that failed with stderr, when that
// blames a half-installed npx folder, and removes the folder the first
// time this upstream meets it; otherwise it returns err.
func (u *Upstream) npxRepair(err error, stderr []string) error {
	dir := brokenNpxDir(stderr)
	if dir == "" || u.cfg.Transport != TransportStdio {
		return err
	}
	out := &npxCacheError{dir: dir, err: err}
	u.mu.Lock()
	first := !u.npxCleared[dir]
	u.npxCleared[dir] = true
	u.mu.Unlock()
	if first {
		if rmErr := removeNpxDir(dir); rmErr != nil {
			u.logger.Warn("removing a half-installed npx folder", "dir", dir, "err", rmErr)
		} else {
			out.cleared = true
			u.logger.Warn("removed a half-installed npx folder; the next start installs afresh", "dir", dir)
		}
	}
	return out
}

// repaired reports whether err is a start that failed in an npx folder
// now removed: the next attempt is the first that can succeed, so the
// upstream is still starting.
func repaired(err error) bool {
	var npx *npxCacheError
	return errors.As(err, &npx) && npx.cleared
}
