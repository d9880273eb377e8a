package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcp-router/mcp-router/audit"
	"github.com/mcp-router/mcp-router/builtin"
	"github.com/mcp-router/mcp-router/cmd/mcp-router/internal/config"
	"github.com/mcp-router/mcp-router/proxy"
	"github.com/mcp-router/mcp-router/proxy/approval"
	"github.com/mcp-router/mcp-router/proxy/integrity"
	"github.com/mcp-router/mcp-router/routing/lessons"
)

// gateway is the composition root: the parts the commands share, assembled from one configuration.
// newGateway does no I/O; Start opens and connects what the command asked for; Close undoes it,
// last opened first.
type gateway struct {
	e    *env
	cfg  *config.Config
	prof config.Profile
	log  *slog.Logger
	need parts

	metrics *proxy.Metrics
	audit   *audit.Log           // nil unless parts.audit
	tracing trace.TracerProvider // nil unless parts.tracing and tracing.otlp_endpoint
	hub     *proxy.Hub           // set by Start
	mem     *lessons.Memory      // nil unless parts.lessons and routing.lessons
	reload  *reloader            // serve's, once it watches the file
	// approvals are the calls waiting for the console's answer, under
	// approvals.without_elicitation: console; nil otherwise.
	approvals *approval.Queue
	closers   []func()
}

// parts says what a command needs of the gateway beyond its hub; the zero value is a hub that Start
// launches, returning once the built-in upstreams are in the catalog.
type parts struct {
	audit   bool // record the calls (audit section)
	tracing bool // export spans (tracing section)
	lessons bool // the profile's routing lessons
	// wait makes Start wait for each upstream's first attempt, and fail on a name collision, for
	// the commands that connect and exit.
	wait bool
	// initTimeout, when set, overrides every upstream's connect timeout (doctor --timeout).
	initTimeout time.Duration
	// readPins checks nothing against the pins and writes none (doctor).
	readPins bool
}

// withGateway starts the configured gateway, runs f with it and closes it; the error also names the
// upstreams that are not connected.
func (e *env) withGateway(ctx context.Context, need parts, f func(*gateway) error) error {
	g, err := e.startGateway(ctx, need)
	if err != nil {
		return err
	}
	defer g.Close()
	return errors.Join(f(g), g.down())
}

// newGateway assembles the gateway of prof; it does no I/O.
func (e *env) newGateway(cfg *config.Config, prof config.Profile, need parts) *gateway {
	g := &gateway{e: e, cfg: cfg, prof: prof, log: e.logger(cfg), need: need, metrics: proxy.NewMetrics()}
	if prof.Approvals.WithoutElicitation == approval.Console {
		g.approvals = approval.NewQueue(approval.DefaultQueue)
	}
	return g
}

// startGateway loads the configuration and starts its gateway; the caller closes it.
func (e *env) startGateway(ctx context.Context, need parts) (*gateway, error) {
	cfg, prof, err := e.loadConfig()
	if err != nil {
		return nil, err
	}
	g := e.newGateway(cfg, prof, need)
	if err := g.Start(ctx); err != nil {
		g.Close()
		return nil, err
	}
	return g, nil
}

// Start opens the audit log and tracing (as asked), then connects the hub: at once (the upstreams
// join as they connect), or waiting for each one's first attempt when parts.wait is set.
func (g *gateway) Start(ctx context.Context) error {
	if g.need.audit {
		if err := g.openAudit(ctx); err != nil {
			return err
		}
	}
	if g.need.tracing {
		if err := g.startTracing(ctx); err != nil {
			return err
		}
	}
	hub := g.newHub(ctx, g.prof)
	g.hub = hub
	var err error
	if g.need.wait {
		err = g.startHub(ctx)
	} else if err = hub.Launch(ctx); err == nil {
		hub.AwaitBuiltins(ctx)
	}
	g.onClose(func() { _ = hub.Close() })
	if err != nil {
		return err
	}
	if g.need.lessons {
		return g.openLessons(ctx)
	}
	return nil
}

// Close stops what Start and the commands started, last first.
func (g *gateway) Close() {
	for i := len(g.closers) - 1; i >= 0; i-- {
		g.closers[i]()
	}
	g.closers = nil
}

// onClose runs f at Close, before what was registered earlier.
func (g *gateway) onClose(f func()) { g.closers = append(g.closers, f) }

// spawn runs f in a goroutine that Close cancels and waits for.
func (g *gateway) spawn(ctx context.Context, f func(context.Context)) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(ctx)
	}()
	g.onClose(func() { cancel(); <-done })
}

// state is the state store for a gateway run: memory, loudly, when it cannot be opened (see
// env.runState).
func (g *gateway) state(ctx context.Context) stateStore { return g.e.runState(ctx, g.cfg, g.log) }

// down is an error naming the upstreams not connected, nil when all are.
func (g *gateway) down() error { return upstreamsDown(g.hub) }

// newHub prepares the hub of prof's upstreams, without connecting.
func (g *gateway) newHub(ctx context.Context, prof config.Profile) *proxy.Hub {
	opts := g.hubOptions(ctx, prof)
	guardChildren(prof.Upstreams)
	return proxy.NewHub(opts)
}

// hubOptions are the hub's options for prof.
func (g *gateway) hubOptions(ctx context.Context, prof config.Profile) proxy.Options {
	cfg := g.cfg
	for _, w := range cfg.Warnings {
		g.log.Warn("config", "warning", w)
	}
	opts := proxy.Options{
		Upstreams:  g.e.withAuthorizers(ctx, cfg, prof.Upstreams, g.log),
		Builtin:    builtin.New,
		Reserved:   proxy.ReservedNames(),
		Logger:     g.log,
		Version:    gatewayVersion(),
		Poisoning:  integrity.Policy(prof.Integrity.Poisoning),
		Tracing:    g.tracing,
		Metrics:    g.metrics.ForProfile(prof.Name), // its belts, upstreams and catalog apart from other profiles
		StartWait:  cfg.Limits.StartWait,
		ConfigFile: cfg.File,

		InitTimeout: cfg.Limits.ConnectTimeout, // an upstream's connect_timeout overrides it

		Notifications: cfg.Limits.Notifications,
		Quotas:        cfg.Limits.Quotas,
		RepeatCalls:   cfg.Limits.RepeatCalls,
		MaxInFlight:   cfg.Limits.UpstreamCalls,
		MaxQueue:      cfg.Limits.UpstreamQueue,
		Disabled:      prof.Disabled,

		ModelResultBytes: cfg.Limits.ModelResultBytes,
		KeptResults:      cfg.Limits.KeptResults,
		Approvals:        prof.Approvals,
		ApprovalQueue:    g.approvals,
	}
	if g.need.initTimeout > 0 {
		opts.InitTimeout = g.need.initTimeout
	}
	if g.audit != nil {
		opts.Audit = g.audit
	}
	if cfg.State.URL != "" && len(cfg.Limits.Quotas) > 0 {
		// Replicas on one database count calls per minute together.
		opts.QuotaCounter = g.state(ctx).Quotas()
	}
	if prof.Integrity.Pins && !g.need.readPins {
		opts.Pins = g.pins(ctx)
	}
	return opts
}

// pins are the tool pins the hub checks contracts against; when the state or the pins cannot be
// read, none is checked and the tools of servers outside the binary are held back (fail closed,
// never stop).
func (g *gateway) pins(ctx context.Context) *integrity.Store {
	st := g.state(ctx)
	if g.e.stateProblem != "" {
		return integrity.Unavailable(errors.New("the state cannot be used: " + g.e.stateProblem))
	}
	store, err := integrity.OpenStore(st.Pins())
	if err != nil {
		g.log.Warn("tool pins unreadable: the tools of servers outside this binary are held back until they can be read", "err", err)
		store = integrity.NewStore(st.Pins())
	}
	return store
}

// startHub connects the hub, waits until each upstream has connected or failed its first attempt,
// and logs how each did.
func (g *gateway) startHub(ctx context.Context) error {
	if err := g.hub.Start(ctx); err != nil {
		return startError(g.cfg, g.prof, err)
	}
	if err := g.hub.AwaitStarted(ctx); err != nil {
		return startError(g.cfg, g.prof, err)
	}
	for _, s := range g.hub.Status() {
		if s.State == proxy.StateConnected {
			g.log.Info("upstream ready", "upstream", s.Name, "tools", s.Tools)
		} else {
			g.log.Warn("upstream not ready", "upstream", s.Name, "state", s.State, "err", why(s))
		}
	}
	return nil
}

// tracingShutdownWait bounds the export of the last spans at exit.
const tracingShutdownWait = 5 * time.Second

// startTracing sets the tracer provider from the tracing section (OTLP/HTTP batches); Close flushes
// it after the hub, so its last spans are exported.
func (g *gateway) startTracing(ctx context.Context) error {
	t := g.cfg.Tracing
	if t.OTLPEndpoint == "" {
		return nil
	}
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(t.OTLPEndpoint))
	if err != nil {
		return fmt.Errorf("%s: tracing.otlp_endpoint: %w", g.cfg.File, err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp),
		sdktrace.WithResource(resource.NewSchemaless(attribute.String("service.name", t.ServiceName))))
	g.log.Info("tracing", "otlp_endpoint", t.OTLPEndpoint, "service_name", t.ServiceName)
	g.tracing = tp
	g.onClose(func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), tracingShutdownWait)
		defer cancel()
		if err := tp.Shutdown(sctx); err != nil {
			g.log.Warn("exporting the last spans", "err", err)
		}
	})
	return nil
}

// guardChildren is called before a hub starts its upstreams. main sets it to startChildGuard; in
// tests it does nothing, as a test binary must not start itself as a watchdog.
var guardChildren = func([]proxy.UpstreamConfig) {}

var childGuard struct {
	once sync.Once
	mu   sync.Mutex
	stop func() // the watchdog's, once started
}

// startChildGuard starts a watchdog process that kills the stdio upstreams' processes if the
// gateway is killed (Linux); not without a stdio upstream or an executable to run.
func startChildGuard(ups []proxy.UpstreamConfig) {
	if !slices.ContainsFunc(ups, func(u proxy.UpstreamConfig) bool { return u.Transport == proxy.TransportStdio }) {
		return
	}
	childGuard.once.Do(func() {
		childGuard.mu.Lock()
		defer childGuard.mu.Unlock()
		if exe, err := os.Executable(); err == nil {
			if stop, err := proxy.StartWatchdog(exe); err == nil {
				childGuard.stop = stop
			}
		}
	})
}

// stopChildGuard ends the watchdog, once the hub is closed.
func stopChildGuard() {
	childGuard.mu.Lock()
	defer childGuard.mu.Unlock()
	if childGuard.stop != nil {
		childGuard.stop()
		childGuard.stop = nil
	}
}
