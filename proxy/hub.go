package proxy

import (
	"cmp"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash/maphash"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcp-router/mcp-router/internal/defaults"
	"github.com/mcp-router/mcp-router/proxy/approval"
	"github.com/mcp-router/mcp-router/proxy/call"
	"github.com/mcp-router/mcp-router/proxy/integrity"
	"github.com/mcp-router/mcp-router/proxy/internal/upstream"
	"github.com/mcp-router/mcp-router/proxy/internal/wire"
	"github.com/mcp-router/mcp-router/proxy/results"
)

// Auditor takes a record of each call (see call.Auditor).
type Auditor = call.Auditor

// The quotas of calls, as package call applies them.
type (
	Quota             = call.Quota
	QuotaError        = call.QuotaError
	QuotaCounter      = call.QuotaCounter
	RepeatedCallError = call.RepeatedCallError
)

// Options configures a Hub. Zero values take the defaults in brackets.
type Options struct {
	Upstreams []UpstreamConfig
	// Builtin builds in-process servers for TransportBuiltin upstreams.
	Builtin BuiltinFunc
	// Reserved names no upstream tool may take (the proxy's own tools).
	Reserved []string
	// Logger receives lifecycle events; nil is silent.
	Logger *slog.Logger
	// InitTimeout bounds connecting to an upstream whose ConnectTimeout
	// is zero [DefaultConnectTimeout].
	InitTimeout time.Duration
	// BackoffMin and BackoffMax bound reconnect delays [500ms, 30s].
	BackoffMin, BackoffMax time.Duration
	// RefreshDebounce coalesces list_changed bursts [250ms].
	RefreshDebounce time.Duration
	// Version is reported to upstreams as the client version ["dev"].
	Version string
	// Pins, when set, pins each tool's contract at first sight and blocks
	// a changed one until it is approved.
	Pins *integrity.Store
	// Poisoning says what to do with a tool that looks poisoned
	// [integrity.Warn].
	Poisoning integrity.Policy
	// RecheckEvery is how often upstreams with blocked tools are vetted
	// again, so that an approval made in another process takes effect [5s].
	RecheckEvery time.Duration
	// MaxInFlight calls run at once per upstream and MaxQueue more may
	// wait; past that calls fail with queue_full [DefaultMaxInFlight,
	// DefaultMaxQueue].
	MaxInFlight, MaxQueue int
	// ReconnectWait is how long a call waits for a restarting upstream [5s].
	ReconnectWait time.Duration
	// Metrics, when set, is the hub's profile's view of the metrics.
	Metrics *Metrics
	// StartWait is how long a call waits for an upstream on its first
	// connection attempt [DefaultStartWait].
	StartWait time.Duration
	// ConfigFile names the configuration in problems logged after start.
	ConfigFile string
	// Notifications bounds the notifications each upstream may send.
	Notifications NotificationLimit
	// Quotas bound each principal's calls per tool, by every route.
	Quotas []Quota
	// QuotaCounter, when set, counts the quotas' calls per minute for all
	// the gateways sharing it rather than in this process.
	QuotaCounter QuotaCounter
	// Audit, when set, receives one record of every call.
	Audit Auditor
	// Tracing, when set, gets a span for each call, plan step and upstream
	// call, whose trace context goes upstream in _meta.
	Tracing trace.TracerProvider
	// RepeatCalls is how many identical calls in a row one session may
	// make before the next is refused with repeated_call; 0 is no bound.
	RepeatCalls int
	// ModelResultBytes bounds a result that reaches a model; the whole of
	// a longer one is kept in the hub's results [DefaultModelResultBytes].
	ModelResultBytes int
	// KeptResults bounds the whole results kept.
	KeptResults results.Options
	// Approvals says which calls a person must approve; none by default.
	Approvals approval.Policy
	// ApprovalQueue is where gated calls wait for the console; nil
	// refuses them.
	ApprovalQueue *approval.Queue
	// Disabled are upstreams left out for their configuration.
	Disabled []DisabledUpstream
}

func (o *Options) defaults() {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	o.Version = cmp.Or(o.Version, "dev")
	defaults.Set(&o.InitTimeout, DefaultConnectTimeout)
	defaults.Set(&o.BackoffMin, 500*time.Millisecond)
	defaults.Set(&o.BackoffMax, 30*time.Second)
	defaults.Set(&o.RefreshDebounce, 250*time.Millisecond)
	defaults.Set(&o.ReconnectWait, 5*time.Second)
	defaults.Set(&o.MaxInFlight, DefaultMaxInFlight)
	defaults.Set(&o.MaxQueue, DefaultMaxQueue)
	defaults.Set(&o.RecheckEvery, 5*time.Second)
	defaults.Set(&o.StartWait, DefaultStartWait)
	defaults.Set(&o.ModelResultBytes, DefaultModelResultBytes)
}

// DefaultModelResultBytes is Options.ModelResultBytes's default: 64 KiB,
// about 16k tokens, small against a model's context.
const DefaultModelResultBytes = 64 << 10

// DefaultConnectTimeout is Options.InitTimeout's default: it fits a first
// `npx -y` run, which installs its package first.
const DefaultConnectTimeout = upstream.DefaultConnectTimeout

// DefaultStartWait is Options.StartWait's default. A cold `npx -y` start
// (the package installed first) takes 13-35 s; MCP clients' own request
// timeouts are typically 60 s (the TypeScript SDK's default), so a first
// call waits for most cold starts and still answers before the client
// gives up.
const DefaultStartWait = 30 * time.Second

// Defaults of Options.MaxInFlight and Options.MaxQueue.
const (
	DefaultMaxInFlight = 32
	DefaultMaxQueue    = 64
)

// Hub holds the upstream connections and their aggregated catalog.
type Hub struct {
	opts     Options
	logger   *slog.Logger
	ups      atomic.Pointer[upstreamSet] // replaced whole by Apply
	disabled atomic.Pointer[disabledSet] // replaced whole by SetDisabled
	progress upstream.ProgressRouter
	args     *call.ArgCheck                          // validates call arguments (validate_arguments)
	callPipe call.Handler                            // the stages of a call in front of its upstream (pipeline.go)
	readPipe call.HandlerOf[*mcp.ReadResourceResult] // those of a resource read (pipeline.go)
	getPipe  call.HandlerOf[*mcp.GetPromptResult]    // those of a prompt get (pipeline.go)
	limits   *call.Limits                            // the quotas and the repeat bound
	results  *results.Store                          // the whole of results cut for the model
	gate     *approval.Gate                          // asks the person before a gated call (pipeline.go)
	shut     chan struct{}                           // closed by Close: calls fail at once (closing)
	catalog  atomic.Pointer[Catalog]
	relay    atomic.Pointer[Relay]
	subID    atomic.Uint64

	applyMu sync.Mutex // serialises Apply

	rebuildMu sync.Mutex // serialises rebuild and the listeners
	lastSig   string     // guarded by rebuildMu
	problems  map[string]bool
	listeners []func(*Catalog)

	// mu is taken after rebuildMu, or alone, and never held across a
	// rebuild.
	mu      sync.Mutex
	cancel  context.CancelFunc          // guarded by mu: stops the recheck loop
	runs    map[*upstream.Upstream]*run // guarded by mu: each running upstream
	closed  bool                        // guarded by mu
	stale   bool                        // guarded by mu: an event awaits a rebuild
	joiners []*upstream.Upstream        // guarded by mu: the upstreams that join in it
	wg      sync.WaitGroup

	// vetted is guarded by mu: the digests vetting worked out, by
	// upstream, for the next rebuild (noteVetted).
	vetted map[string]map[*mcp.Tool]digest
}

// NewHub prepares a hub; it does no I/O until Start.
func NewHub(opts Options) *Hub {
	opts.defaults()
	h := &Hub{opts: opts, logger: opts.Logger, problems: map[string]bool{}, runs: map[*upstream.Upstream]*run{}, shut: make(chan struct{}),
		limits: call.NewLimits(opts.Quotas, opts.QuotaCounter, opts.RepeatCalls, opts.Logger), results: results.New(opts.KeptResults)}
	env := h.upstreamEnv()
	set := &upstreamSet{byName: map[string]*upstream.Upstream{}}
	for _, cfg := range opts.Upstreams {
		set.add(upstream.New(cfg, env))
	}
	h.ups.Store(set.sorted())
	h.disabled.Store(&disabledSet{list: opts.Disabled, since: time.Now()})
	h.catalog.Store(buildCatalog(nil, nil, opts.Reserved))
	h.args = call.NewArgCheck(argSchemas{h}, opts.Logger)
	h.gate = approval.New(approval.Options{Policy: opts.Approvals, Tool: h.approvalTool, Ask: h.elicit,
		Queue: opts.ApprovalQueue, Audit: opts.Audit, Logger: opts.Logger})
	h.callPipe = chain(h.upstreamCall, h.stages())
	h.readPipe = chain(h.readUpstream, readStages(h, h.screenResource))
	h.getPipe = chain(h.getUpstream, readStages(h, h.screenPrompt))
	return h
}

// upstreamEnv is what the hub hands each upstream.
func (h *Hub) upstreamEnv() upstream.Env {
	o := h.opts
	env := upstream.Env{
		Logger: h.logger, Builtin: o.Builtin, Version: o.Version,
		InitTimeout: o.InitTimeout, BackoffMin: o.BackoffMin, BackoffMax: o.BackoffMax,
		RefreshDebounce: o.RefreshDebounce, ReconnectWait: o.ReconnectWait,
		MaxInFlight: o.MaxInFlight, MaxQueue: o.MaxQueue, Notifications: o.Notifications,
		Progress: &h.progress, Relay: h.relayTo, Vet: h.vet, Poisoning: o.Poisoning, Listed: h.listed,
	}
	if o.Metrics != nil { // a nil *Metrics would make a non-nil interface
		env.Metrics = o.Metrics
	}
	return env
}

// listed rebuilds the catalog for an upstream's new listing; on its first
// attempt the upstream joins (names go by upstream name order).
func (h *Hub) listed(u *upstream.Upstream, first bool) {
	if !first {
		u = nil
	}
	h.record(u)
	h.flush()
}

// record notes an event for the next flush; joiner, when not nil, joins in
// the rebuild that follows.
func (h *Hub) record(joiner *upstream.Upstream) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.stale = true
	if joiner != nil {
		h.joiners = append(h.joiners, joiner)
	}
}

// Launch starts connecting every upstream and returns at once; failing
// upstreams keep retrying. A tool name two upstreams want goes, while both
// are on their first attempt, to the first in name order, so who keeps it
// never depends on timing; later, the upstream that has it keeps it.
func (h *Hub) Launch(ctx context.Context) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.cancel != nil {
		return errors.New("hub already started")
	}
	if h.closed {
		return ErrHubNotRunning
	}
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	h.cancel = cancel
	for _, d := range h.disabledNow().list {
		h.logger.Warn("upstream disabled", "upstream", d.Name, "err", d.Err)
	}
	for _, u := range h.set().list {
		h.runLocked(runCtx, u)
	}
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		h.recheckLoop(runCtx)
	}()
	return nil
}

// Start launches the upstreams and waits for their first attempts
// (AwaitStarted), returning the tool name collisions.
func (h *Hub) Start(ctx context.Context) error {
	if err := h.Launch(ctx); err != nil {
		return err
	}
	return h.AwaitStarted(ctx)
}

// AwaitStarted waits until every upstream's first attempt has ended, at
// most the longest first attempt allowed and a second, or until ctx ends;
// it returns the catalog's name collisions. A stdio child busy starting
// (npx installing) may take several connect limits.
func (h *Hub) AwaitStarted(ctx context.Context) error {
	var longest time.Duration
	for _, u := range h.set().list {
		longest = max(longest, u.MaxFirstAttempt())
	}
	h.awaitFirst(ctx, h.set().list, time.Now().Add(longest+time.Second))
	return h.collisions()
}

// NotConnected returns the upstreams not connected, sorted by name.
func (h *Hub) NotConnected() []Status {
	return slices.DeleteFunc(h.Status(), func(s Status) bool { return s.State == StateConnected })
}

func (h *Hub) collisions() error {
	var errs []error
	for _, p := range h.Catalog().Problems {
		if p.Collision {
			errs = append(errs, &CollisionError{Text: p.Text, Upstreams: p.Upstreams})
		}
	}
	return errors.Join(errs...)
}

// CollisionError is a tool name two upstreams (or an upstream and the
// proxy, named "") both want: a configuration error.
type CollisionError struct {
	Text      string
	Upstreams []string
}

func (e *CollisionError) Error() string { return e.Text }

// Close stops every upstream and waits for them. A request after Close
// fails at once with ErrHubNotRunning.
func (h *Hub) Close() error {
	h.mu.Lock()
	cancel, runs := h.cancel, h.runs
	if !h.closed {
		close(h.shut)
	}
	h.closed, h.runs = true, nil
	h.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	for _, r := range runs {
		r.cancel()
	}
	h.wg.Wait()
	return nil
}

// closing is the error of a request made after Close (nil before): a
// closed hub brings no upstream back, so a request must not wait for one.
func (h *Hub) closing(c *call.Call) error {
	select {
	case <-h.shut:
		return &UpstreamError{Kind: call.KindUnavailable, Upstream: c.Upstream, Tool: c.Tool, Err: ErrHubNotRunning}
	default:
		return nil
	}
}

// Follow calls fn with the current catalog, then, serialised, with each
// catalog whose content changed, missing none in between.
func (h *Hub) Follow(fn func(*Catalog)) {
	h.rebuildMu.Lock()
	defer h.rebuildMu.Unlock()
	h.listeners = append(h.listeners, fn)
	fn(h.Catalog())
}

// SetRelay sets where upstream requests and notifications for clients go.
func (h *Hub) SetRelay(r Relay) { h.relay.Store(&r) }

func (h *Hub) relayTo() Relay {
	if r := h.relay.Load(); r != nil {
		return *r
	}
	return nil
}

// Metrics returns the hub's metrics (nil when off).
func (h *Hub) Metrics() *Metrics { return h.opts.Metrics }

// Catalog returns the current catalog snapshot.
func (h *Hub) Catalog() *Catalog { return h.catalog.Load() }

// Status reports every upstream's state, sorted by name.
func (h *Hub) Status() []Status {
	ups, dis := h.set().list, h.disabledNow()
	out := make([]Status, len(ups), len(ups)+len(dis.list))
	for i, u := range ups {
		out[i] = u.Status()
	}
	for _, d := range dis.list {
		out = append(out, d.status(dis.since))
	}
	slices.SortStableFunc(out, func(a, b Status) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// rebuild recomputes the catalog and tells the listeners when it changed.
func (h *Hub) rebuild() {
	h.record(nil)
	h.flush()
}

// settle waits for a rebuild under way to end.
func (h *Hub) settle() {
	h.rebuildMu.Lock()
	//lint:ignore SA2001 an empty critical section is the point: a barrier behind the rebuild under way
	h.rebuildMu.Unlock()
}

// flush rebuilds the catalog once for every event recorded so far, unless
// a rebuild that began after them already did: events that come during a
// rebuild share the next one. On return, the stored catalog reflects every
// event recorded before the call.
func (h *Hub) flush() {
	h.rebuildMu.Lock()
	defer h.rebuildMu.Unlock()
	h.mu.Lock()
	stale, joiners := h.stale, h.joiners
	h.stale, h.joiners = false, nil
	h.mu.Unlock()
	if stale {
		h.rebuildLocked(joiners)
	}
}

// rebuildLocked recomputes the catalog with rebuildMu held. Names stay
// with their upstreams, except those the joiners take from upstreams later
// in name order, as if every upstream had connected at once (yieldTo).
func (h *Hub) rebuildLocked(joiners []*upstream.Upstream) {
	set := h.set()
	vetted := h.takeVetted()
	offers := make([]offer, 0, len(set.list))
	for _, u := range set.list {
		offers = append(offers, offer{cfg: u.Config(), Listing: u.Listing(), vetted: vetted[u.Name()]})
	}
	prev := h.Catalog()
	for _, u := range joiners {
		if set.has(u) { // not one Apply stopped since
			prev = yieldTo(prev, u)
		}
	}
	c := buildCatalog(prev, offers, h.opts.Reserved)
	h.keepUnused(vetted, offers)
	sig := signature(c) // before the store: it notes each tool's sum in c
	h.catalog.Store(c)
	h.opts.Metrics.CatalogSize(len(c.Tools))
	h.reportProblems(c.Problems, c.Warnings)
	if sig != h.lastSig {
		h.lastSig = sig
		for _, fn := range h.listeners {
			fn(c)
		}
	}
}

// reportProblems logs each catalog problem and warning when it appears.
func (h *Hub) reportProblems(problems, warnings []Problem) {
	now := make(map[string]bool, len(problems)+len(warnings))
	for _, p := range problems {
		now[p.Text] = true
		if !h.problems[p.Text] {
			h.logProblem(p)
		}
	}
	for _, w := range warnings {
		now[w.Text] = true
		if !h.problems[w.Text] {
			h.logger.Warn("catalog warning", "warning", w.Text)
		}
	}
	h.problems = now
}

// logProblem logs a catalog problem as an error a person must act on.
func (h *Hub) logProblem(p Problem) {
	args := []any{"problem", p.Text}
	if len(p.Upstreams) > 0 {
		args = append(args, "upstreams", p.Upstreams)
	}
	if h.opts.ConfigFile != "" {
		args = append(args, "file", h.opts.ConfigFile)
	}
	h.logger.Error("catalog problem", args...)
}

// yieldTo is prev without the tools joining offers that an upstream after
// it in name order holds.
func yieldTo(prev *Catalog, joining *upstream.Upstream) *Catalog {
	wanted := map[string]bool{}
	for _, t := range joining.Listing().Tools {
		wanted[joining.Config().Prefix+t.Name] = true
	}
	yields := false
	for i := range prev.Tools {
		yields = yields || wanted[prev.Tools[i].Name] && prev.Tools[i].Upstream > joining.Name()
	}
	if !yields {
		return prev // nothing to yield: no copy of the catalog per joiner
	}
	kept := &Catalog{}
	for _, t := range prev.Tools {
		if wanted[t.Name] && t.Upstream > joining.Name() {
			continue
		}
		kept.Tools = append(kept.Tools, t)
	}
	return kept
}

// signature is a digest of what a client sees of a catalog.
func signature(c *Catalog) string {
	b := sha256.New()
	c.defSums = make([]uint64, len(c.Tools))
	for i, t := range c.Tools {
		def, _ := t.Def.MarshalJSON()
		b.Write(def)
		c.defSums[i] = maphash.Bytes(listSeed, def)
	}
	for _, p := range c.Prompts {
		fmt.Fprintf(b, "|p:%s:%s", p.Name, p.Def.Description)
	}
	for _, r := range c.Resources {
		fmt.Fprintf(b, "|r:%s", r.Def.URI)
	}
	for _, t := range c.Templates {
		fmt.Fprintf(b, "|t:%v", t.Def.URITemplate)
	}
	return string(b.Sum(nil))
}

func classify(ctx context.Context, err error) Kind {
	switch {
	case ctx.Err() != nil:
		return call.KindCancelled
	case errors.Is(err, context.DeadlineExceeded):
		return call.KindTimeout
	case errors.Is(err, upstream.ErrCircuitOpen):
		return call.KindCircuitOpen
	case errors.Is(err, upstream.ErrQueueFull):
		return call.KindQueueFull
	case errors.Is(err, wire.ErrMessageTooLarge):
		return call.KindTooLarge
	case errors.Is(err, wire.ErrProtocol):
		return call.KindProtocol
	case upstream.NeedsLogin(err):
		return call.KindAuthRequired
	case errors.Is(err, upstream.ErrNotConnected), upstream.IsTransportError(err):
		return call.KindUnavailable
	default:
		return call.KindUpstreamError
	}
}

func callErr(c *call.Call, err error, cfg UpstreamConfig) error {
	var timeout *upstream.TimeoutError
	if errors.As(err, &timeout) {
		return timeout // it says which limit
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("no answer within %s", cfg.EffectiveCallTimeout())
	}
	if upstream.NeedsLogin(err) {
		return upstream.AuthRequired(c.Principal, cfg, upstream.WithoutURL(err))
	}
	return upstream.WithoutURL(err)
}
