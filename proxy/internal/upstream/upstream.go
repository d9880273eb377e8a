package upstream

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

	"github.com/mcp-router/mcp-router/proxy/apps"
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

// ErrNotConnected is returned when an upstream has no live connection.
var ErrNotConnected = errors.New("not connected")

// ErrCircuitOpen is returned while an upstream keeps failing to connect.
var ErrCircuitOpen = errors.New("circuit open")

// ErrQueueFull is returned when an upstream has too many calls in flight
// and waiting.
var ErrQueueFull = errors.New("too many calls waiting")

// Listing is what an upstream offers, as last listed.
type Listing struct {
	Tools     []mcp.Tool        // what is exposed: allowed, and not blocked by vetting
	Raw       []mcp.Tool        // allowed, before vetting
	Blocked   map[string]string // own tool name -> why it is hidden
	Resources []mcp.Resource
	Templates []mcp.ResourceTemplate
	Prompts   []mcp.Prompt
	Withheld  []string // URIs of resources the poisoning policy left out
}

// Upstream is one upstream server and the loop that keeps it connected.
type Upstream struct {
	cfg       Config
	env       Env
	logger    *slog.Logger
	stderrLog *stderrLog // a stdio child's stderr, across restarts
	scrub     *Scrubber
	refresh   chan struct{} // buffered 1: a list_changed arrived
	retry     chan struct{} // buffered 1: Retry was called while failed
	calls     callers       // client calls in progress, for requests back to the client
	slots     chan struct{} // in-flight calls; capacity MaxInFlight
	queued    atomic.Int64  // calls waiting for a slot
	first     chan struct{} // closed when the first connect attempt ended
	once      sync.Once
	notes     *notifyLimiter

	mu          sync.Mutex
	conn        *Conn // nil while not connected
	state       State
	lastErr     error
	offer       Listing
	restarts    int
	failures    int             // connection attempts failed in a row; reset by a connection
	connectedAt time.Time       // when the last connection was made
	ready       chan struct{}   // closed while connected; replaced on disconnect
	phase       phase           // what the current attempt is doing
	phaseSince  time.Time       // when it started doing it
	startedAt   time.Time       // when the first attempt began
	firstTook   time.Duration   // how long the first attempt took, once it ended
	reached     phase           // the furthest phase the current (or last) attempt reached
	failReached phase           // the furthest phase the last failed attempt reached
	downSince   time.Time       // when the last connection was lost
	stderr      *lineTail       // the current attempt's child's last stderr lines
	failStderr  []string        // the stderr lines of the last failed attempt
	protocol    string          // protocol version the upstream answered initialize with
	npxCleared  map[string]bool // npx install folders removed once (see npxRepair)
}

// New is the upstream cfg, run on env; it does no I/O until Run.
func New(cfg Config, env Env) *Upstream {
	if env.Metrics == nil {
		env.Metrics = noMetrics{}
	}
	scrub := newScrubber(cfg)
	logger := scrubLogger(env.Logger, scrub).With("upstream", cfg.Name)
	return &Upstream{
		cfg:        cfg,
		env:        env,
		scrub:      scrub,
		logger:     logger,
		stderrLog:  newStderrLog(logger),
		refresh:    make(chan struct{}, 1),
		retry:      make(chan struct{}, 1),
		slots:      make(chan struct{}, env.MaxInFlight),
		ready:      make(chan struct{}),
		first:      make(chan struct{}),
		npxCleared: map[string]bool{},
		state:      StateConnecting,
		notes:      newNotifyLimiter(cfg.Name, env.Notifications, logger, env.Metrics),
	}
}

// Run keeps the upstream connected until ctx ends, reconnecting with
// jittered exponential backoff, reset by a connection that lived long.
func (u *Upstream) Run(ctx context.Context) {
	defer u.markFirst()
	u.mu.Lock()
	u.startedAt = time.Now()
	u.mu.Unlock()
	u.env.Metrics.UpstreamState(u.cfg.Name, string(StateConnecting))
	attempt := 0
	for {
		started := time.Now()
		err := u.session(ctx, started)
		if ctx.Err() != nil {
			u.setState(StateStopped, nil)
			return
		}
		lasting := cannotFixItself(err, u.attemptStderr())
		if lasting {
			err = fmt.Errorf("%w, next retry in %s or at once on `mcp-router reload` or a profile change: %w", errLasting, lastingRetry, err)
		}
		u.setState(StateFailed, err)
		if time.Since(started) > u.env.BackoffMax {
			attempt = 0
		}
		delay := backoff(attempt, u.env.BackoffMin, u.env.BackoffMax)
		if lasting {
			delay = lastingRetry
		}
		attempt++
		u.mu.Lock()
		if u.connectedAt.Before(started) { // this attempt never connected
			u.failures++
		}
		u.mu.Unlock()
		u.logger.Warn("upstream down", "err", WithoutURL(err), "retry_in", delay.Round(time.Millisecond))
		if !repaired(err) {
			u.markFirst() // after the log line: who waits for the first attempt finds it logged
		}
		if !u.wait(ctx, delay) {
			u.setState(StateStopped, nil)
			return
		}
		u.mu.Lock()
		u.restarts++
		u.env.Metrics.UpstreamRestart(u.cfg.Name)
		u.mu.Unlock()
	}
}

func (u *Upstream) markFirst() {
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

// wait waits d before the next attempt, less when Retry is called, and
// reports false when ctx ended first.
func (u *Upstream) wait(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
	case <-u.retry:
	}
	return true
}

// Retry makes a failed upstream waiting for its next attempt try at once.
func (u *Upstream) Retry() {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.state == StateFailed {
		select {
		case u.retry <- struct{}{}:
		default:
		}
	}
}

// sleep waits d, and reports false when ctx ended first.
func sleep(ctx context.Context, d time.Duration) bool { return !within(ctx.Done(), d) }

// within waits up to d for done, and reports whether it came.
func within(done <-chan struct{}, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
		return true
	case <-t.C:
		return false
	}
}

// session connects once (an attempt begun at started), publishes what the
// upstream offers, and serves list_changed refreshes until the connection
// is lost or ctx ends.
func (u *Upstream) session(ctx context.Context, started time.Time) error {
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
	limited, cancel := u.withConnectLimit(ctx, c)
	began := time.Now()
	offer, err := u.handshake(limited, c)
	cancel()
	if err != nil {
		return u.handshakeFailed(ctx, c, tail, err, time.Since(began))
	}
	u.connected(c, offer, started)
	u.markFirst()
	return u.serve(ctx, c)
}

func (u *Upstream) dial(ctx context.Context, tail *lineTail) (*Conn, error) {
	if u.cfg.Transport == TransportBuiltin {
		if u.env.Builtin == nil {
			return nil, fmt.Errorf("builtin %s: no built-in servers in this build", u.cfg.Builtin)
		}
		return dialInProcess(ctx, u.env.Builtin, u.cfg)
	}
	return dial(ctx, u.cfg, u.logger, u.stderrLog, tail, u.handlerOptions()...)
}

// handshake initializes c and lists what it offers, within ctx's limit.
func (u *Upstream) handshake(ctx context.Context, c *Conn) (Listing, error) {
	req := mcp.InitializeRequest{}
	req.Params.ProtocolVersion = u.cfg.protocolVersion()
	req.Params.ClientInfo = mcp.Implementation{Name: "mcp-router", Version: u.env.Version}
	req.Params.Capabilities.Extensions = apps.ClientExtension() // views pass through to the clients
	init, err := c.client.Initialize(ctx, req)
	if err != nil {
		return Listing{}, fmt.Errorf("initialize: %w", err)
	}
	u.mu.Lock()
	u.protocol = init.ProtocolVersion
	u.mu.Unlock()
	u.setPhase(phaseListing)
	c.caps = init.Capabilities
	if c.caps.Logging != nil {
		// The proxy filters per client; the upstream sends from info up.
		req := mcp.SetLevelRequest{}
		req.Params.Level = mcp.LoggingLevelInfo
		//lint:ignore SA1019 upstreams are pinned to 2025-11-25 by default, where logging/setLevel still exists
		if err := c.client.SetLevel(ctx, req); err != nil {
			u.logger.Debug("setting the upstream's log level", "err", WithoutURL(err))
		}
	}
	return u.list(ctx, c)
}

// list fetches everything the upstream offers. Tools are required;
// resources and prompts are listed only when advertised, and a failure to
// list them is logged, not fatal.
func (u *Upstream) list(ctx context.Context, c *Conn) (Listing, error) {
	var out Listing
	tools, err := listTools(ctx, c.client, u.cfg.listBudget("tools/list"), u.logger)
	if err != nil && c.caps.Tools != nil {
		return out, fmt.Errorf("listing tools: %w", err)
	}
	if err == nil {
		u.scrub.tools(tools)
		out.Raw = u.filter(tools)
		out.Tools, out.Blocked = u.env.Vet(u.cfg, u.logger, u.logger, out.Raw)
	}
	// On an error a listing is nil.
	if c.caps.Resources != nil {
		if out.Resources, err = listResources(ctx, c.client, u.cfg.listBudget("resources/list")); err != nil {
			u.logger.Warn("listing resources", "err", WithoutURL(err))
		}
		if out.Templates, err = listResourceTemplates(ctx, c.client, u.cfg.listBudget("resources/templates/list")); err != nil {
			u.logger.Debug("listing resource templates", "err", WithoutURL(err))
		}
	}
	if c.caps.Prompts != nil {
		if out.Prompts, err = listPrompts(ctx, c.client, u.cfg.listBudget("prompts/list")); err != nil {
			u.logger.Warn("listing prompts", "err", WithoutURL(err))
		}
	}
	u.scrub.offer(&out)
	u.vetOffer(&out)
	return out, nil
}

// filter applies the upstream's allow and deny lists.
func (u *Upstream) filter(tools []mcp.Tool) []mcp.Tool {
	return slices.DeleteFunc(slices.Clone(tools), func(t mcp.Tool) bool {
		return len(u.cfg.Allow) > 0 && !slices.Contains(u.cfg.Allow, t.Name) || slices.Contains(u.cfg.Deny, t.Name)
	})
}

// connected publishes c and offer; the log line's dur is the time since
// started, when this attempt began.
func (u *Upstream) connected(c *Conn, offer Listing, started time.Time) {
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
	took := u.connectedAt.Sub(started)
	u.mu.Unlock()
	u.env.Metrics.UpstreamState(u.cfg.Name, string(StateConnected))
	u.logger.Info("upstream connected", "tools", len(offer.Tools),
		"resources", len(offer.Resources), "prompts", len(offer.Prompts), "dur", took.Round(time.Millisecond))
	u.env.Listed(u, u.Starting())
}

// NeverConnected reports whether the upstream has not connected once in
// this run.
func (u *Upstream) NeverConnected() bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.connectedAt.IsZero()
}

// Starting reports whether the upstream is still on its first attempt.
func (u *Upstream) Starting() bool {
	select {
	case <-u.first:
		return false
	default:
		return true
	}
}

// serve waits for the connection to end, refreshing the listing (debounced,
// never overlapping) when the upstream says it changed.
func (u *Upstream) serve(ctx context.Context, c *Conn) error {
	defer u.disconnected(c)
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-c.lost:
			return c.lostErr()
		case <-u.refresh:
			if !sleep(ctx, u.env.RefreshDebounce) {
				return ctx.Err()
			}
			select {
			case <-u.refresh: // what came during the debounce
			default:
			}
			u.relist(ctx, c)
		}
	}
}

func (u *Upstream) relist(ctx context.Context, c *Conn) {
	ctx, cancel := context.WithTimeout(ctx, u.connectLimit())
	defer cancel()
	offer, err := u.list(ctx, c)
	if err != nil {
		u.logger.Warn("refreshing upstream listing", "err", WithoutURL(err))
		return
	}
	u.mu.Lock()
	u.offer = offer
	u.mu.Unlock()
	u.logger.Info("upstream listing changed", "tools", len(offer.Tools))
	u.env.Listed(u, false)
}

// Revet vets the last listing again, quietly (it runs every few seconds
// while a tool is blocked), and reports whether what it blocks changed.
func (u *Upstream) Revet() bool {
	u.mu.Lock()
	offer := u.offer
	u.mu.Unlock()
	kept, blocked := u.env.Vet(u.cfg, u.logger, quiet, offer.Raw)
	if maps.Equal(blocked, offer.Blocked) {
		return false
	}
	u.mu.Lock()
	if !sameListing(u.offer.Raw, offer.Raw) {
		u.mu.Unlock()
		return false // re-listed meanwhile: that listing was vetted afresh
	}
	u.offer.Tools, u.offer.Blocked = kept, blocked
	u.mu.Unlock()
	u.logger.Info("blocked tools re-checked", "blocked", slices.Sorted(maps.Keys(blocked)))
	for _, name := range slices.Sorted(maps.Keys(blocked)) {
		if _, before := offer.Blocked[name]; !before {
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
func (u *Upstream) disconnected(c *Conn) {
	u.mu.Lock()
	if u.conn == c {
		u.conn = nil
		u.ready = make(chan struct{})
		u.downSince = time.Now()
	}
	u.mu.Unlock()
}

// GiveUp gives the live connection, if any, up with err, as a lost
// connection is: the upstream reconnects after the shortest backoff.
func (u *Upstream) GiveUp(err error) {
	u.mu.Lock()
	c := u.conn
	u.mu.Unlock()
	if c != nil {
		c.markLost(err)
	}
}

func (u *Upstream) setState(s State, err error) {
	u.mu.Lock()
	u.state, u.lastErr = s, u.scrub.sinkErr(WithoutURL(err)) // read by error messages that reach clients, status and doctor
	u.phase, u.phaseSince = phaseNone, time.Now()
	if s == StateFailed {
		u.failStderr = u.scrub.lines(explainingStderr(u.stderr.lines())) // nil-safe: no attempt yet
		u.failReached = u.reached
	}
	u.mu.Unlock()
	u.env.Metrics.UpstreamState(u.cfg.Name, string(s))
}

func (u *Upstream) onNotification(n mcp.JSONRPCNotification) {
	if !u.notes.allow(n.Method) {
		return
	}
	switch notificationKind(n.Method) {
	case "list_changed":
		select {
		case u.refresh <- struct{}{}:
		default: // a refresh is already pending
		}
	case "progress":
		u.env.Progress.forward(u.cfg.Name, u.scrub.progress(n))
	case "message":
		u.relayLog(n)
	case "resource_updated":
		u.relayResourceUpdated(n)
	}
}

// Current returns the live connection or an error saying why there is none.
func (u *Upstream) Current() (*Conn, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.currentLocked()
}

func (u *Upstream) currentLocked() (*Conn, error) {
	if u.conn != nil {
		return u.conn, nil
	}
	if u.failures >= crashLoop {
		return nil, fmt.Errorf("%w: failed %d times in a row, last: %v", ErrCircuitOpen, u.failures, u.ForModel(u.lastErr))
	}
	if u.lastErr != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotConnected, u.ForModel(u.lastErr))
	}
	return nil, ErrNotConnected
}

// await returns the live connection, waiting up to ReconnectWait (and
// ctx) for an upstream that is restarting; an open circuit fails at once.
func (u *Upstream) await(ctx context.Context) (*Conn, error) {
	var deadline *time.Timer // started when the first look finds no connection
	for {
		u.mu.Lock()
		c, err := u.currentLocked()
		ready := u.ready
		u.mu.Unlock()
		if err == nil || errors.Is(err, ErrCircuitOpen) {
			return c, err
		}
		if deadline == nil {
			deadline = time.NewTimer(u.env.ReconnectWait)
			defer deadline.Stop()
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

// crashLoop failed connection attempts in a row open the circuit: calls
// fail fast until a reconnect (paced by the backoff) succeeds.
const crashLoop = 3

// CallTool calls the upstream's own tool name within its deadlines (an
// idle timeout that progress restarts, under a hard maximum). At most
// MaxInFlight calls run at once and MaxQueue wait; past that a call fails
// at once with ErrQueueFull.
func (u *Upstream) CallTool(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
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
	req, stopProgress := u.watchProgress(req, deadline.touch)
	defer stopProgress()
	callCtx, check := wire.WithReplyCheck(deadline)
	res, err := callOnce(callCtx, c, req)
	if err != nil {
		return nil, u.callFailed(ctx, c, deadline, check, err)
	}
	c.answered()
	return res, nil
}

// watchProgress has each progress report for req restart touch (see
// ProgressRouter.watch).
func (u *Upstream) watchProgress(req mcp.CallToolRequest, touch func()) (mcp.CallToolRequest, func()) {
	var meta mcp.Meta
	if req.Params.Meta != nil {
		meta = *req.Params.Meta
	}
	var stop func()
	meta.ProgressToken, stop = u.env.Progress.watch(u.cfg.Name, meta.ProgressToken, touch)
	req.Params.Meta = &meta
	return req, stop
}

// callFailed says why a call failed. A timeout or a reply that broke the
// protocol leaves the connection up; a broken connection is given up, and
// the call not retried: a tool call need not be idempotent (FI-01).
func (u *Upstream) callFailed(ctx context.Context, c *Conn, deadline *idleContext, check *wire.ReplyCheck, err error) error {
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
	if NeedsLogin(err) {
		return err // a 401 judges this request's credentials (per caller), not the connection
	}
	if !IsTransportError(err) {
		c.answered() // an error answer is an answer; a broken reply is not
	}
	if IsTransportError(err) && failsOneRequest(u.cfg, err) {
		c.violation(err) // an HTTP request failed; the session and the other calls go on
		return err
	}
	if IsTransportError(err) {
		if u.cfg.Transport == TransportStdio {
			within(c.lost, 2*exitWait) // the pipe closes as the child exits: wait for how it ended
		}
		c.markLost(err)
		var exit *exitError
		if lost := c.lostErr(); errors.Is(lost, wire.ErrMessageTooLarge) || errors.As(lost, &exit) {
			return lost // say why the connection went
		}
	}
	return err
}

// admit waits for an in-flight slot, or refuses when the queue is full.
func (u *Upstream) admit(ctx context.Context) (release func(), err error) {
	release = func() { <-u.slots }
	select {
	case u.slots <- struct{}{}:
		return release, nil
	default:
	}
	if u.queued.Add(1) > int64(u.env.MaxQueue) {
		u.queued.Add(-1)
		return nil, fmt.Errorf("%w: %d calls in flight and %d waiting", ErrQueueFull, cap(u.slots), u.env.MaxQueue)
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
	Err      string // why the last attempt failed; empty while connected or starting
	Starting bool   // the first connection attempt goes on
	// EverConnected: Tools is then the last listing, kept while down.
	EverConnected bool
	Doing         string    // what an attempt under way is doing, and for how long
	Protocol      string    // the version the upstream answered initialize with
	Since         time.Time // when the first attempt began (Starting) or the state changed
	// DownSince is when the connection was lost, or the first attempt began.
	DownSince    time.Time
	AuthNeeded   bool          // a remote upstream answered 401
	Stderr       []string      // a stdio child's last lines of stderr
	Cause        error         // the last attempt's error, for errors.Is
	FirstAttempt time.Duration // how long the first attempt took, once it ended
	// Started and Initialized say how far the last attempt got.
	Started, Initialized bool
	Blocked              int // tools held back by pins or the poisoning scan
}

// Status is a snapshot of the upstream now.
func (u *Upstream) Status() Status {
	u.mu.Lock()
	defer u.mu.Unlock()
	s := Status{Name: u.cfg.Name, State: u.state, Tools: len(u.offer.Tools), Restarts: u.restarts,
		Starting: u.Starting() && u.state != StateConnected, EverConnected: !u.connectedAt.IsZero(), Protocol: u.protocol,
		Since: u.phaseSince, Stderr: u.failStderr, Cause: u.lastErr, FirstAttempt: u.firstTook,
		Started:     max(u.reached, u.failReached) >= phaseInitializing || u.state == StateConnected,
		Initialized: max(u.reached, u.failReached) >= phaseListing || u.state == StateConnected, Blocked: len(u.offer.Blocked)}
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

// Config is the upstream's configuration, as it was created with.
func (u *Upstream) Config() Config { return u.cfg }

// Name is the upstream's configured name.
func (u *Upstream) Name() string { return u.cfg.Name }

// First is closed when the upstream's first connection attempt has ended,
// connected or not.
func (u *Upstream) First() <-chan struct{} { return u.first }

// Scrubber keeps the upstream's configured secrets out of text and errors
// shown to a client or written to a log.
func (u *Upstream) Scrubber() *Scrubber { return u.scrub }

// WithCaller records ctx as a call of its client in progress, so that what
// the upstream asks meanwhile (sampling, elicitation) goes to that client.
// It returns the context to send the request with and the func that ends
// the record.
func (u *Upstream) WithCaller(ctx context.Context) (context.Context, func()) {
	return u.calls.add(ctx)
}

// Seed gives an upstream not yet run the listing of the run it replaces,
// filtered by its own allow and deny lists, so the catalog does not flap.
func (u *Upstream) Seed(l Listing) {
	l.Tools, l.Raw = u.filter(l.Tools), u.filter(l.Raw)
	u.mu.Lock()
	u.offer = l
	u.mu.Unlock()
}

// Listing is what the upstream offers, as last listed.
func (u *Upstream) Listing() Listing {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.offer
}

// Conn is one live client connection to an upstream.
type Conn struct {
	client     *client.Client
	caps       mcp.ServerCapabilities
	lost       chan struct{} // closed when the connection is gone
	once       sync.Once
	mu         sync.Mutex
	err        error
	stop       func()      // releases the transport (and the child, for stdio)
	settled    func() bool // stdio: no request awaits its answer or its cancellation's write; nil elsewhere
	onLost     func()      // set by the upstream once connected
	violations []time.Time // protocol errors within violationWindow
	timeouts   int         // calls timed out since the last answer

	work  func() uint64  // stdio: changes while the child works (see withConnectLimit)
	stdin *wire.StdinTap // stdio: sends the calls whose replies skip mcp-go (callDirect)
}

// MaxTimeouts calls in a row that time out with no answer in between give
// the connection up, as a wedged child answers nothing more (FI-04).
const MaxTimeouts = 5

// Client is the connection's MCP client.
func (c *Conn) Client() *client.Client { return c.client }

// Caps are the capabilities the upstream answered initialize with.
func (c *Conn) Caps() mcp.ServerCapabilities { return c.caps }

// timedOut counts a call that timed out and ejects the upstream at
// MaxTimeouts in a row.
func (c *Conn) timedOut(err error) {
	c.mu.Lock()
	c.timeouts++
	n := c.timeouts
	c.mu.Unlock()
	if n >= MaxTimeouts {
		c.markLost(fmt.Errorf("%d calls in a row timed out with no answer in between, the last: %w", n, err))
	}
}

// answered resets the count of calls timed out in a row.
func (c *Conn) answered() {
	c.mu.Lock()
	c.timeouts = 0
	c.mu.Unlock()
}

// MaxViolations protocol errors within violationWindow (broken lines,
// refused replies) give the connection up (FI-09, FI-10).
const (
	MaxViolations   = 5
	violationWindow = time.Minute
)

// violation counts one protocol error of the upstream's.
func (c *Conn) violation(err error) {
	now := time.Now()
	c.mu.Lock()
	c.violations = slices.DeleteFunc(c.violations, func(t time.Time) bool { return now.Sub(t) > violationWindow })
	c.violations = append(c.violations, now)
	n := len(c.violations)
	c.mu.Unlock()
	if n >= MaxViolations {
		c.markLost(fmt.Errorf("%d protocol errors within %s, the last: %w", n, violationWindow, err))
	}
}

func newConn(c *client.Client, stop func()) *Conn {
	return &Conn{client: c, lost: make(chan struct{}), stop: stop}
}

func (c *Conn) markLost(err error) {
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

// served reports whether the upstream took c into use: initialized and
// listed.
func (c *Conn) served() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.onLost != nil
}

func (c *Conn) lostErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err == nil {
		return errors.New("connection lost")
	}
	return c.err
}

func (c *Conn) close() { c.stop() }
