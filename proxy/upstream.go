package proxy

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-router/mcp-router/proxy/internal/wire"
)

// State is an upstream's connection state.
type State string

// The states an upstream moves through.
const (
	StateConnecting State = "connecting"
	StateConnected  State = "connected"
	StateFailed     State = "failed"
	StateStopped    State = "stopped"
)

// listing is what an upstream offers, as last listed.
type listing struct {
	tools     []mcp.Tool        // what is exposed: allowed, and not blocked by vetting
	raw       []mcp.Tool        // allowed, before vetting
	blocked   map[string]string // own tool name -> why it is hidden
	resources []mcp.Resource
	templates []mcp.ResourceTemplate
	prompts   []mcp.Prompt
}

// upstream is one upstream server and the loop that keeps it connected.
type upstream struct {
	cfg       UpstreamConfig
	env       upstreamEnv // what it needs from its owner
	logger    *slog.Logger
	stderrLog *stderrLog    // a stdio child's stderr, across restarts
	scrub     *scrubber     // the configured secrets, kept out of errors and logs
	refresh   chan struct{} // buffered 1: a list_changed arrived
	calls     callers       // client calls in progress, for requests back to the client
	slots     chan struct{} // in-flight calls; capacity MaxInFlight
	queued    atomic.Int64  // calls waiting for a slot
	first     chan struct{} // closed when the first connect attempt ended
	once      sync.Once

	notes *notifyLimiter // the rate limit on its notifications

	mu          sync.Mutex
	conn        *conn // nil while not connected
	state       State
	lastErr     error
	offer       listing
	restarts    int
	failures    int           // connection attempts failed in a row; reset by a connection
	connectedAt time.Time     // when the last connection was made
	ready       chan struct{} // closed while connected; replaced on disconnect
	phase       phase         // what the current attempt is doing
	phaseSince  time.Time     // when it started doing it
	startedAt   time.Time     // when the first attempt began
	firstTook   time.Duration // how long the first attempt took, once it ended
	reached     phase         // the furthest phase the current (or last) attempt reached
	failReached phase         // the furthest phase the last failed attempt reached
	downSince   time.Time     // when the last connection was lost
	stderr      *lineTail     // the current attempt's child's last stderr lines
	failStderr  []string      // the stderr lines of the last failed attempt
	protocol    string        // protocol version the upstream answered initialize with
}

func newUpstream(cfg UpstreamConfig, env upstreamEnv) *upstream {
	scrub := newScrubber(cfg)
	logger := scrubLogger(env.logger, scrub).With("upstream", cfg.Name)
	return &upstream{
		cfg:       cfg,
		env:       env,
		scrub:     scrub,
		logger:    logger,
		stderrLog: newStderrLog(logger),
		refresh:   make(chan struct{}, 1),
		slots:     make(chan struct{}, env.maxInFlight),
		ready:     make(chan struct{}),
		first:     make(chan struct{}),
		state:     StateConnecting,
		notes:     newNotifyLimiter(cfg.Name, env.notifications, logger, env.metrics),
	}
}

// run keeps the upstream connected until ctx ends, reconnecting with
// jittered exponential backoff. A connection that lived long enough resets
// the backoff.
func (u *upstream) run(ctx context.Context) {
	defer u.markFirst()
	u.mu.Lock()
	u.startedAt = time.Now()
	u.mu.Unlock()
	u.env.metrics.UpstreamState(u.cfg.Name, string(StateConnecting))
	attempt := 0
	for {
		started := time.Now()
		err := u.session(ctx)
		if ctx.Err() != nil {
			u.setState(StateStopped, nil)
			return
		}
		u.setState(StateFailed, err)
		if time.Since(started) > u.env.backoffMax {
			attempt = 0
		}
		delay := backoff(attempt, u.env.backoffMin, u.env.backoffMax)
		attempt++
		u.mu.Lock()
		if u.connectedAt.Before(started) { // this attempt never connected
			u.failures++
		}
		u.mu.Unlock()
		u.logger.Warn("upstream down", "err", withoutURL(err), "retry_in", delay.Round(time.Millisecond))
		u.markFirst() // after the log line: who waits for the first attempt finds it logged
		if !sleep(ctx, delay) {
			u.setState(StateStopped, nil)
			return
		}
		u.mu.Lock()
		u.restarts++
		u.env.metrics.UpstreamRestart(u.cfg.Name)
		u.mu.Unlock()
	}
}

func (u *upstream) markFirst() {
	u.once.Do(func() {
		u.mu.Lock()
		u.firstTook = time.Since(u.startedAt)
		u.mu.Unlock()
		close(u.first)
	})
}

// backoff is min·2^attempt capped at max, with ±20% jitter.
func backoff(attempt int, lo, hi time.Duration) time.Duration {
	d := lo << min(attempt, 20)
	if d <= 0 || d > hi {
		d = hi
	}
	jitter := 0.8 + 0.4*rand.Float64()
	return time.Duration(float64(d) * jitter)
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// session connects once, publishes what the upstream offers, and serves
// list_changed refreshes until the connection is lost or ctx ends.
func (u *upstream) session(ctx context.Context) error {
	u.setPhase(phaseDialing)
	tail := newLineTail(stderrTailLines)
	u.mu.Lock()
	u.stderr = tail
	u.mu.Unlock()
	c, err := u.dial(ctx, tail)
	if err != nil {
		return u.where(err)
	}
	defer c.close()
	defer u.drain(ctx, c) // before the close: let cancelled calls tell the upstream
	c.client.OnNotification(u.onNotification)
	u.setPhase(phaseInitializing)
	offer, err := u.handshake(ctx, c)
	if err != nil {
		return u.handshakeFailed(ctx, c, tail, err)
	}
	u.connected(c, offer)
	u.markFirst()
	return u.serve(ctx, c)
}

func (u *upstream) dial(ctx context.Context, tail *lineTail) (*conn, error) {
	if u.cfg.Transport == TransportBuiltin {
		if u.env.builtin == nil {
			return nil, fmt.Errorf("builtin %s: no built-in servers in this build", u.cfg.Builtin)
		}
		return dialInProcess(ctx, u.env.builtin, u.cfg)
	}
	return dial(ctx, u.cfg, u.logger, u.stderrLog, tail, u.handlerOptions()...)
}

func (u *upstream) handshake(ctx context.Context, c *conn) (listing, error) {
	ctx, cancel := context.WithTimeout(ctx, u.env.initTimeout)
	defer cancel()
	req := mcp.InitializeRequest{}
	req.Params.ProtocolVersion = u.protocolVersion()
	req.Params.ClientInfo = mcp.Implementation{Name: "mcp-router", Version: u.env.version}
	init, err := c.client.Initialize(ctx, req)
	if err != nil {
		return listing{}, fmt.Errorf("initialize: %w", err)
	}
	u.mu.Lock()
	u.protocol = init.ProtocolVersion
	u.mu.Unlock()
	u.setPhase(phaseListing)
	c.caps = init.Capabilities
	if c.caps.Logging != nil {
		// Clients set their own levels with the proxy, which filters per
		// client; the upstream sends everything from info up.
		req := mcp.SetLevelRequest{}
		req.Params.Level = mcp.LoggingLevelInfo
		//lint:ignore SA1019 upstreams are pinned to 2025-11-25 by default, where logging/setLevel still exists
		if err := c.client.SetLevel(ctx, req); err != nil {
			u.logger.Debug("setting the upstream's log level", "err", withoutURL(err))
		}
	}
	return u.list(ctx, c)
}

func (u *upstream) protocolVersion() string {
	switch u.cfg.Protocol {
	case "":
		return DefaultProtocolVersion
	case "modern":
		return ""
	default:
		return u.cfg.Protocol
	}
}

// list fetches everything the upstream offers. Tools are required, and
// keep their schemas as the upstream declared them (see listTools);
// resources and prompts are listed only when advertised, and a failure to
// list them is logged, not fatal.
func (u *upstream) list(ctx context.Context, c *conn) (listing, error) {
	var out listing
	tools, err := listTools(ctx, c.client, u.cfg.listBudget("tools/list"), u.logger)
	if err != nil && c.caps.Tools != nil {
		return out, fmt.Errorf("listing tools: %w", err)
	}
	if err == nil {
		out.raw = u.filter(tools)
		out.tools, out.blocked = u.env.vet(u.cfg, u.logger, u.logger, out.raw)
	}
	if c.caps.Resources != nil {
		out.resources, out.templates = u.listResources(ctx, c)
	}
	if c.caps.Prompts != nil {
		if p, err := listPrompts(ctx, c.client, u.cfg.listBudget("prompts/list")); err != nil {
			u.logger.Warn("listing prompts", "err", withoutURL(err))
		} else {
			out.prompts = p
		}
	}
	return out, nil
}

func (u *upstream) listResources(ctx context.Context, c *conn) ([]mcp.Resource, []mcp.ResourceTemplate) {
	var res []mcp.Resource
	var tpl []mcp.ResourceTemplate
	if r, err := listResources(ctx, c.client, u.cfg.listBudget("resources/list")); err != nil {
		u.logger.Warn("listing resources", "err", withoutURL(err))
	} else {
		res = r
	}
	if t, err := listResourceTemplates(ctx, c.client, u.cfg.listBudget("resources/templates/list")); err != nil {
		u.logger.Debug("listing resource templates", "err", withoutURL(err))
	} else {
		tpl = t
	}
	return res, tpl
}

// filter applies the upstream's allow and deny lists.
func (u *upstream) filter(tools []mcp.Tool) []mcp.Tool {
	out := tools[:0:0]
	for _, t := range tools {
		if len(u.cfg.Allow) > 0 && !slices.Contains(u.cfg.Allow, t.Name) {
			continue
		}
		if slices.Contains(u.cfg.Deny, t.Name) {
			continue
		}
		out = append(out, t)
	}
	return out
}

func (u *upstream) connected(c *conn, offer listing) {
	c.mu.Lock()
	c.onLost = func() { u.disconnected(c) }
	c.mu.Unlock()
	select {
	case <-c.lost: // lost during the handshake
		return
	default:
	}
	u.mu.Lock()
	u.failures = 0
	u.connectedAt = time.Now()
	close(u.ready) // wake the calls waiting for this connection
	u.conn, u.state, u.lastErr, u.offer = c, StateConnected, nil, offer
	u.phase, u.phaseSince, u.downSince = phaseNone, u.connectedAt, time.Time{}
	took := u.connectedAt.Sub(u.startedAt)
	u.mu.Unlock()
	u.env.metrics.UpstreamState(u.cfg.Name, string(StateConnected))
	u.logger.Info("upstream connected", "tools", len(offer.tools),
		"resources", len(offer.resources), "prompts", len(offer.prompts), "dur", took.Round(time.Millisecond))
	u.env.listed(u, u.starting())
}

// neverConnected reports whether the upstream has not connected once in
// this run.
func (u *upstream) neverConnected() bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.connectedAt.IsZero()
}

// starting reports whether the upstream is still on its first attempt.
func (u *upstream) starting() bool {
	select {
	case <-u.first:
		return false
	default:
		return true
	}
}

// serve waits for the connection to end, refreshing the listing when the
// upstream says it changed. Refreshes are debounced and, being done on
// this one goroutine, never overlap.
func (u *upstream) serve(ctx context.Context, c *conn) error {
	defer u.disconnected(c)
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-c.lost:
			return c.lostErr()
		case <-u.refresh:
			if !sleep(ctx, u.env.refreshDebounce) {
				return ctx.Err()
			}
			u.drainRefresh()
			u.relist(ctx, c)
		}
	}
}

func (u *upstream) drainRefresh() {
	select {
	case <-u.refresh:
	default:
	}
}

func (u *upstream) relist(ctx context.Context, c *conn) {
	ctx, cancel := context.WithTimeout(ctx, u.env.initTimeout)
	defer cancel()
	offer, err := u.list(ctx, c)
	if err != nil {
		u.logger.Warn("refreshing upstream listing", "err", withoutURL(err))
		return
	}
	u.mu.Lock()
	u.offer = offer
	u.mu.Unlock()
	u.logger.Info("upstream listing changed", "tools", len(offer.tools))
	u.env.listed(u, false)
}

// revet vets the last listing again and reports whether what it blocks
// changed. It runs every few seconds while a tool is blocked, so the
// findings, logged when the tool was listed, are not logged again; a
// change is.
func (u *upstream) revet() bool {
	u.mu.Lock()
	offer := u.offer
	u.mu.Unlock()
	kept, blocked := u.env.vet(u.cfg, u.logger, quiet, offer.raw)
	if maps.Equal(blocked, offer.blocked) {
		return false
	}
	u.mu.Lock()
	if !sameListing(u.offer.raw, offer.raw) {
		u.mu.Unlock()
		return false // re-listed meanwhile: that listing was vetted afresh
	}
	u.offer.tools, u.offer.blocked = kept, blocked
	u.mu.Unlock()
	u.logger.Info("blocked tools re-checked", "blocked", slices.Sorted(maps.Keys(blocked)))
	for _, name := range slices.Sorted(maps.Keys(blocked)) {
		if _, before := offer.blocked[name]; !before {
			u.logger.Warn("tool blocked", "tool", name, "why", blocked[name])
		}
	}
	return true
}

// sameListing reports whether a and b are one listing (not equal copies:
// each tools/list answer is a new slice).
func sameListing(a, b []mcp.Tool) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// quiet is a logger that drops everything.
var quiet = slog.New(slog.DiscardHandler)

// disconnected forgets the connection but keeps the last listing, so the
// catalog does not flap while the upstream restarts; calls fail fast.
func (u *upstream) disconnected(c *conn) {
	u.mu.Lock()
	if u.conn == c {
		u.conn = nil
		u.ready = make(chan struct{})
		u.downSince = time.Now()
	}
	u.mu.Unlock()
}

// giveUp gives the live connection up with err, as a lost connection is:
// a stdio child is stopped and the upstream reconnects after the shortest
// backoff. An upstream not connected is retrying already; it is left be.
func (u *upstream) giveUp(err error) {
	u.mu.Lock()
	c := u.conn
	u.mu.Unlock()
	if c != nil {
		c.markLost(err)
	}
}

func (u *upstream) setState(s State, err error) {
	u.mu.Lock()
	u.state, u.lastErr = s, u.scrub.err(withoutURL(err)) // read by error messages that reach clients
	u.phase, u.phaseSince = phaseNone, time.Now()
	if s == StateFailed {
		u.failStderr = u.stderr.lines() // nil-safe: no attempt yet
		u.failReached = u.reached
	}
	u.mu.Unlock()
	u.env.metrics.UpstreamState(u.cfg.Name, string(s))
}

func (u *upstream) onNotification(n mcp.JSONRPCNotification) {
	if !u.notes.allow(n.Method) {
		return
	}
	switch n.Method {
	case string(mcp.MethodNotificationToolsListChanged),
		string(mcp.MethodNotificationResourcesListChanged),
		string(mcp.MethodNotificationPromptsListChanged):
		select {
		case u.refresh <- struct{}{}:
		default: // a refresh is already pending
		}
	case string(mcp.MethodNotificationProgress):
		u.env.progress.forward(u.cfg.Name, u.scrub.progress(n))
	case string(mcp.MethodNotificationMessage):
		u.relayLog(n)
	case string(mcp.MethodNotificationResourceUpdated):
		u.relayResourceUpdated(n)
	}
}

// current returns the live connection or an error saying why there is none.
func (u *upstream) current() (*conn, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.currentLocked()
}

func (u *upstream) currentLocked() (*conn, error) {
	if u.conn != nil {
		return u.conn, nil
	}
	if u.failures >= crashLoop {
		return nil, fmt.Errorf("%w: failed %d times in a row, last: %v", ErrCircuitOpen, u.failures, u.forModel(u.lastErr))
	}
	if u.lastErr != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotConnected, u.forModel(u.lastErr))
	}
	return nil, ErrNotConnected
}

// await returns the live connection, waiting up to ReconnectWait (and
// ctx) for an upstream that is restarting: a call that arrives while a
// crashed child comes back gets through instead of failing. A crash loop
// (open circuit) fails at once.
func (u *upstream) await(ctx context.Context) (*conn, error) {
	deadline := time.NewTimer(u.env.reconnectWait)
	defer deadline.Stop()
	for {
		u.mu.Lock()
		c, err := u.currentLocked()
		ready := u.ready
		u.mu.Unlock()
		if err == nil || errors.Is(err, ErrCircuitOpen) {
			return c, err
		}
		select {
		case <-ready:
		case <-deadline.C:
			return nil, err
		case <-ctx.Done():
			return nil, err
		}
	}
}

// crashLoop is how many failed connection attempts in a row open the
// upstream's circuit: calls then fail fast with circuit_open until a
// reconnect (the half-open probe, paced by the backoff) succeeds.
const crashLoop = 3

// callTool calls the upstream's own tool name within its deadlines (an
// idle timeout that progress restarts, under a hard maximum). At most
// MaxInFlight calls run at once per upstream and MaxQueue wait; past that
// a call fails at once with ErrQueueFull, so a slow upstream never holds
// up the others or piles up without bound.
func (u *upstream) callTool(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	c, err := u.await(ctx)
	if err != nil {
		return nil, err
	}
	release, err := u.admit(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	deadline, cancel := newCallDeadline(ctx, u.cfg)
	defer cancel()
	req, stopProgress := u.watchProgress(req, deadline.idle.touch)
	defer stopProgress()
	callCtx, check := wire.WithReplyCheck(deadline.idle)
	res, err := c.client.CallTool(callCtx, req)
	if err != nil {
		return nil, u.callFailed(ctx, c, deadline, check, err)
	}
	c.answered()
	return res, nil
}

// watchProgress has each progress report for req restart touch. A call
// whose caller asked for no progress gets a token all the same, so that
// an upstream that reports progress is not cut by the idle timeout.
func (u *upstream) watchProgress(req mcp.CallToolRequest, touch func()) (mcp.CallToolRequest, func()) {
	var meta mcp.Meta
	if req.Params.Meta != nil {
		meta = *req.Params.Meta
	}
	release := func() {}
	if meta.ProgressToken == nil {
		meta.ProgressToken, release = u.env.progress.register(u.cfg.Name, nil)
	}
	req.Params.Meta = &meta
	stop := u.env.progress.onReport(fmt.Sprint(meta.ProgressToken), touch)
	return req, func() {
		stop()
		release()
	}
}

// callFailed says why a call failed. A timeout or a reply that broke the
// protocol leaves the connection up; a broken connection is given up,
// and the call not retried: it may have reached the upstream, and a tool
// call need not be idempotent (FI-01).
func (u *upstream) callFailed(ctx context.Context, c *conn, deadline *callDeadline, check *wire.ReplyCheck, err error) error {
	if ctx.Err() != nil {
		return err // the caller went away
	}
	if timeout := deadline.expired(ctx); timeout != nil {
		c.timedOut(timeout)
		return timeout
	}
	if refused := check.Problem(); refused != nil {
		return refused // an HTTP reply wire.ReplyGuard refused
	}
	if refused := wire.ProtocolReply(err); refused != nil {
		return refused // a stdio line wire.LineVet refused
	}
	if needsLogin(err) {
		return err // a 401 judges this request's credentials (per caller), not the connection
	}
	if !isTransportError(err) {
		c.answered() // an error answer is an answer; a broken reply is not
	}
	if isTransportError(err) && failsOneRequest(u.cfg, err) {
		c.violation(err) // an HTTP request failed; the session and the other calls go on
		return err
	}
	if isTransportError(err) {
		c.markLost(err)
		if lost := c.lostErr(); errors.Is(lost, ErrMessageTooLarge) {
			return lost // say why the connection went
		}
	}
	return err
}

// admit waits for an in-flight slot, or refuses when the queue is full.
func (u *upstream) admit(ctx context.Context) (release func(), err error) {
	release = func() { <-u.slots }
	select {
	case u.slots <- struct{}{}:
		return release, nil
	default:
	}
	if u.queued.Add(1) > int64(u.env.maxQueue) {
		u.queued.Add(-1)
		return nil, fmt.Errorf("%w: %d calls in flight and %d waiting", ErrQueueFull, cap(u.slots), u.env.maxQueue)
	}
	defer u.queued.Add(-1)
	select {
	case u.slots <- struct{}{}:
		return release, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Status is a snapshot of one upstream for display.
type Status struct {
	Name     string
	State    State
	Tools    int
	Restarts int
	// Err is why the last attempt failed; empty while connected, and while
	// the first attempt goes on (Doing says what it is doing).
	Err string
	// Starting is set while the first connection attempt goes on.
	Starting bool
	// EverConnected is set once the upstream has connected in this run;
	// Tools is then its last listing, kept while it is down.
	EverConnected bool
	// Doing says what an attempt under way is doing, and for how long:
	// "process running, no answer to initialize after 20s".
	Doing string
	// Protocol is the version the upstream answered initialize with.
	Protocol string
	// Since is when the first attempt began (Starting) or the state last
	// changed.
	Since time.Time
	// DownSince is when an upstream not connected lost its connection, or
	// when its first attempt began if it never connected.
	DownSince time.Time
	// AuthNeeded is set when a remote upstream answered 401.
	AuthNeeded bool
	// Stderr holds a stdio child's last lines of stderr.
	Stderr []string
	// Cause is the last attempt's error, for errors.Is (Err is its text).
	Cause error
	// FirstAttempt is how long the first attempt took, once it ended.
	FirstAttempt time.Duration
	// Started and Initialized say how far the last attempt got: the
	// process started (or the connection opened), initialize answered.
	Started, Initialized bool
	// Blocked counts the tools held back by pins or the poisoning scan.
	Blocked int
}

func (u *upstream) status() Status {
	u.mu.Lock()
	defer u.mu.Unlock()
	s := Status{Name: u.cfg.Name, State: u.state, Tools: len(u.offer.tools), Restarts: u.restarts,
		Starting: u.starting() && u.state != StateConnected, EverConnected: !u.connectedAt.IsZero(), Protocol: u.protocol,
		Since: u.phaseSince, Stderr: u.failStderr, Cause: u.lastErr, FirstAttempt: u.firstTook,
		Started:     max(u.reached, u.failReached) >= phaseInitializing || u.state == StateConnected,
		Initialized: max(u.reached, u.failReached) >= phaseListing || u.state == StateConnected, Blocked: len(u.offer.blocked)}
	if s.Starting {
		s.Since = u.startedAt
	}
	if u.state != StateConnected {
		s.DownSince = u.downSince
		if s.DownSince.IsZero() {
			s.DownSince = u.startedAt
		}
	}
	if u.phase != phaseNone {
		s.Doing = u.doing(time.Since(u.phaseSince))
	}
	if u.lastErr != nil {
		s.Err = u.lastErr.Error()
		s.AuthNeeded = errors.Is(u.lastErr, ErrUnauthorized)
	}
	return s
}

func (u *upstream) listing() listing {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.offer
}

// conn is one live client connection to an upstream.
type conn struct {
	client     *client.Client
	caps       mcp.ServerCapabilities
	lost       chan struct{} // closed when the connection is gone
	once       sync.Once
	mu         sync.Mutex
	err        error
	stop       func()      // releases the transport (and the child, for stdio)
	settled    func() bool // stdio: no request awaits its answer or its cancellation's write; nil elsewhere
	onLost     func()      // guarded by mu; set by the upstream once connected
	violations []time.Time // guarded by mu: protocol errors within violationWindow
	timeouts   int         // guarded by mu: calls timed out since the last answer
}

// maxTimeouts calls in a row that time out, with no answer from the
// upstream in between, eject it: the connection is given up and the
// upstream restarted, as a wedged child or a stuck session answers
// nothing more (FI-04's outlier ejection). One answer resets the count.
const maxTimeouts = 5

// timedOut counts a call that timed out and ejects the upstream at
// maxTimeouts in a row.
func (c *conn) timedOut(err error) {
	c.mu.Lock()
	c.timeouts++
	n := c.timeouts
	c.mu.Unlock()
	if n >= maxTimeouts {
		c.markLost(fmt.Errorf("%d calls in a row timed out with no answer in between, the last: %w", n, err))
	}
}

// answered resets the count of calls timed out in a row.
func (c *conn) answered() {
	c.mu.Lock()
	c.timeouts = 0
	c.mu.Unlock()
}

// maxViolations protocol errors from an upstream within violationWindow
// (broken lines, refused replies) give its connection up: the upstream
// is restarted (FI-09, FI-10). Fewer are only logged and counted.
const (
	maxViolations   = 5
	violationWindow = time.Minute
)

// violation counts one protocol error of the upstream's, and gives the
// connection up at maxViolations within violationWindow.
func (c *conn) violation(err error) {
	now := time.Now()
	c.mu.Lock()
	c.violations = slices.DeleteFunc(c.violations, func(t time.Time) bool { return now.Sub(t) > violationWindow })
	c.violations = append(c.violations, now)
	n := len(c.violations)
	c.mu.Unlock()
	if n >= maxViolations {
		c.markLost(fmt.Errorf("%d protocol errors within %s, the last: %w", n, violationWindow, err))
	}
}

func newConn(c *client.Client, stop func()) *conn {
	return &conn{client: c, lost: make(chan struct{}), stop: stop}
}

func (c *conn) markLost(err error) {
	c.once.Do(func() {
		c.mu.Lock()
		c.err = err
		onLost := c.onLost
		c.mu.Unlock()
		close(c.lost)
		if onLost != nil {
			onLost() // new calls stop using this connection at once
		}
	})
}

func (c *conn) lostErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err == nil {
		return errors.New("connection lost")
	}
	return c.err
}

func (c *conn) close() { c.stop() }
