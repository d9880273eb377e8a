package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/http"
	"runtime/debug"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcp-router/mcp-router/cmd/mcp-router/internal/config"
	"github.com/mcp-router/mcp-router/proxy"
	"github.com/mcp-router/mcp-router/proxy/frontdoor"
)

func newServeCmd(e *env) *cobra.Command {
	var httpAddr, metricsAddr string
	cmd := &cobra.Command{
		Use:   "serve [--http ADDR]",
		Short: "Run the gateway for an MCP client (stdio by default)",
		Long: `Run the gateway. By default it speaks MCP over stdin and stdout, as an MCP client
such as Claude Desktop expects when it starts a server; logs go to stderr. With
--http ADDR it serves streamable HTTP at http://ADDR/mcp instead.

It answers initialize (and, with --http, opens its listener) at once, with the
upstreams connected so far; each upstream that connects later joins the catalog,
and clients get notifications/tools/list_changed. A call of a tool whose upstream
is still starting waits for it (up to start_wait, 10s by default), then fails with
upstream_starting. Each upstream has connect_timeout (60s by default) to answer
initialize; a stdio server still busy then, as a first npx -y run installing, is
given up to five times as long. An upstream that fails is retried in the
background and does not hold the others up. With --http, /healthz says the
gateway is alive and /readyz whether every upstream is connected.

Edits of the profile file apply while it runs: the upstreams an edit adds,
removes or changes start, stop or restart, and clients stay connected; an edit
that does not load is refused and the running configuration stays (see
mcp-router reload --help).`,
		Example: `  mcp-router serve
  mcp-router serve --config ~/profiles.yaml --profile work
  mcp-router serve --http 127.0.0.1:8080`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return e.serve(cmd.Context(), httpAddr, metricsAddr)
		},
	}
	cmd.Flags().StringVar(&httpAddr, "http", "", "serve streamable HTTP on this address (e.g. 127.0.0.1:8080) instead of stdio")
	cmd.Flags().StringVar(&metricsAddr, "metrics", "", "with stdio, also serve Prometheus metrics at http://ADDR/metrics (with --http they are at /metrics)")
	return cmd
}

func (e *env) serve(ctx context.Context, httpAddr, metricsAddr string) error {
	cfg, prof, err := e.loadConfig()
	if err != nil {
		return err
	}
	var ln net.Listener
	if httpAddr != "" {
		// Listening first: a port in use fails before anything starts, and the registry gets the
		// real address (":0" picks one).
		if ln, err = listenChecked(cfg, httpAddr); err != nil {
			return err
		}
		defer ln.Close()
	}
	g := e.newGateway(cfg, prof, parts{audit: true, tracing: true, lessons: true})
	defer g.Close()
	logConfigSource(cfg, g.log)
	tuneGC(e.getenv, g.log)
	srv, err := g.startServing(ctx, ln)
	if err != nil {
		return err
	}
	if ln == nil {
		g.log.Info("serving stdio", "profile", prof.Name, "upstreams", len(prof.Upstreams)) // they join as they connect
		return e.serveStdio(ctx, g, srv, metricsAddr)
	}
	return g.serveStreamable(ctx, srv, ln, httpAddr)
}

// listenChecked checks the http section for serve --http, then listens on addr.
func listenChecked(cfg *config.Config, addr string) (net.Listener, error) {
	if err := cfg.CheckHTTP(); err != nil {
		return nil, err
	}
	if _, err := sessionKey(cfg); err != nil {
		return nil, err
	}
	var auth frontdoor.Options
	cfg.HTTP.Auth(&auth)
	if err := frontdoor.CheckListen(addr, auth); err != nil {
		return nil, err
	}
	return listen(addr)
}

// startServing launches the hub (the others join the built-in servers as they connect), follows
// edits of the profile file, learns lessons, registers the gateway, and returns its server.
func (g *gateway) startServing(ctx context.Context, ln net.Listener) (*proxy.Server, error) {
	if g.cfg.State.Required {
		if _, err := g.e.cliState(ctx, g.cfg); err != nil {
			return nil, fmt.Errorf("%s: state.required is set and the state cannot be opened: %w", g.cfg.File, err)
		}
	}
	if err := g.Start(ctx); err != nil {
		return nil, err
	}
	g.watchConfig(ctx) // edits of the profile file apply to the running hub (reload.go)
	g.spawn(ctx, func(ctx context.Context) { reportStart(ctx, g.hub, g.prof, g.log) })
	if g.mem != nil {
		// Stopped at Close, not by ctx: the last flush comes after the server's last call, before
		// the store closes.
		g.spawn(context.WithoutCancel(ctx), func(ctx context.Context) {
			if err := g.mem.Run(ctx, time.Minute); err != nil {
				g.log.Warn("saving routing lessons", "err", err)
			}
		})
	}
	srv, err := g.server(ctx)
	if err != nil {
		return nil, err
	}
	g.onClose(srv.Close)
	addr := ""
	if ln != nil {
		addr = ln.Addr().String()
	}
	g.register(ctx, addr)
	return srv, nil
}

// serveStreamable serves the gateway's server and its other profiles on ln, with the front door's
// checks, the metrics, health and the console.
func (g *gateway) serveStreamable(ctx context.Context, srv *proxy.Server, ln net.Listener, httpAddr string) error {
	cfg := g.cfg
	// At shutdown, cancel the calls in flight upstream (each still answered) and end the streams.
	stop := context.AfterFunc(ctx, srv.CancelCalls)
	g.onClose(func() { stop() })
	guard := g.guard(srv, httpAddr)
	mcpHandler, err := g.callerProfiles(ctx, srv)
	if err != nil {
		return err
	}
	for i, t := range cfg.HTTP.BearerTokens { // the names quotas and audit records use
		g.log.Info("bearer token principal", "index", i, "principal", frontdoor.TokenFingerprint(t))
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", frontdoor.Guard(mcpHandler, guard))
	// Every tool listed, for clients that search themselves: a resource of its own below /mcp, with
	// its own metadata.
	allGuard := guard
	allGuard.Subresource = strings.TrimPrefix(proxy.AllPath, "/mcp")
	mux.Handle(proxy.AllPath, frontdoor.Guard(mcpHandler, allGuard))
	for _, opts := range []frontdoor.Options{guard, allGuard} {
		for _, path := range frontdoor.MetadataPaths(opts) {
			mux.Handle(path, frontdoor.ResourceMetadata(opts))
		}
	}
	mux.Handle("/metrics", frontdoor.Guard(frontdoor.WholeGatewayOnly(g.metrics.Handler()), guard))
	mux.Handle("/healthz", proxy.HealthHandler(g.hub, proxy.Alive, guard))
	mux.Handle("/readyz", proxy.HealthHandler(g.hub, proxy.Ready, guard))
	if err := g.mountConsole(ctx, mux, guard); err != nil {
		return err
	}
	g.log.Info("serving streamable HTTP", "url", "http://"+ln.Addr().String()+"/mcp")
	return serveOn(ctx, mux, ln, cfg.HTTP.Bounds.Server, false) // the servers' CancelCalls end their work
}

// guard is the front door's configuration for serve --http on httpAddr.
func (g *gateway) guard(srv *proxy.Server, httpAddr string) frontdoor.Options {
	cfg := g.cfg
	var hosts []string
	if h, _, _ := net.SplitHostPort(httpAddr); h != "" && h != "0.0.0.0" && h != "::" {
		hosts = append(hosts, h)
	}
	hosts = append(hosts, cfg.HTTP.AllowedHosts...)
	guard := frontdoor.Options{AllowedOrigins: cfg.HTTP.AllowedOrigins, AllowedHosts: hosts, Logger: g.log,
		TrustedProxies: cfg.HTTP.TrustedProxies}
	cfg.HTTP.Auth(&guard)
	guard.Profile = g.prof.Name           // a token naming it is served as one naming none
	guard.SessionOwner = srv.SessionOwner // sessions other replicas opened under the same http.session_key
	// One count of refused tokens for every path.
	guard.TokenFailures = frontdoor.NewTokenFailures(0)
	cfg.HTTP.Bounds.Guard(&guard)
	return guard
}

// serveStdio serves one client on stdin and stdout, and the metrics on metricsAddr when it is set
// (to Hosts that are loopback, its own, or http.allowed_hosts); it ends when either ends.
func (e *env) serveStdio(ctx context.Context, g *gateway, srv *proxy.Server, metricsAddr string) error {
	if metricsAddr == "" {
		return srv.ServeStdio(ctx, e.stdin, e.stdout)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	metricsDone := make(chan error, 1)
	go func() { metricsDone <- proxy.ServeMetrics(ctx, metricsAddr, g.metrics, g.cfg.HTTP.AllowedHosts, g.log) }()
	err := srv.ServeStdio(ctx, e.stdin, e.stdout)
	cancel()
	if merr := <-metricsDone; err == nil && merr != nil {
		err = fmt.Errorf("metrics: %w", merr)
	}
	return err
}

// reportStart logs, once every upstream has connected or failed its first attempt (or ctx ended),
// how many are connected, and the core tools that are not in the catalog.
func reportStart(ctx context.Context, hub *proxy.Hub, prof config.Profile, log *slog.Logger) {
	_ = hub.AwaitStarted(ctx) // a collision was logged as it was found
	if ctx.Err() != nil {
		return
	}
	down := hub.NotConnected()
	if len(down) == 0 {
		log.Info("all upstreams connected", "upstreams", len(prof.Upstreams), "tools", len(hub.Catalog().Tools))
	} else {
		log.Warn("upstreams not connected after their first attempt", "err", upstreamsDown(hub))
	}
	warnMissingCore(hub, prof, log)
}

// why says why an upstream is not connected: its last error, or what its attempt under way is
// doing.
func why(s proxy.Status) string {
	switch {
	case s.Starting:
		return startingFor(s)
	case s.Err != "":
		return s.Err
	case s.Doing != "":
		return s.Doing
	}
	return string(s.State)
}

// startingFor says how long an upstream on its first attempt has been starting, and what it is
// doing: "starting for 34s: process running, no answer to initialize after 34s".
func startingFor(s proxy.Status) string {
	text := "starting"
	if !s.Since.IsZero() {
		text = fmt.Sprintf("starting for %s", time.Since(s.Since).Round(time.Second))
	}
	if s.Doing != "" {
		text += ": " + s.Doing
	}
	return text
}

// upstreamsDown is an error naming the upstreams that are not connected, for the commands that
// connect and then exit; nil when all are.
func upstreamsDown(hub *proxy.Hub) error {
	down := hub.NotConnected()
	if len(down) == 0 {
		return nil
	}
	parts := make([]string, len(down))
	for i, s := range down {
		parts[i] = fmt.Sprintf("%s (%s)", s.Name, why(s))
	}
	return fmt.Errorf("%d of %d upstreams not connected: %s", len(down), len(hub.Status()), strings.Join(parts, "; "))
}

func listen(addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listening on %s: %w", addr, err)
	}
	return ln, nil
}

// serveOn serves h on ln until ctx ends, then shuts down gracefully, waiting at most 5 s for the
// requests in flight. With cancelRequests, requests run under a context that shutdown cancels
// first, so that clients' open event streams end and Shutdown need not wait them out. Without it,
// h ends its own work at ctx's end (serve --http: the gateway cancels each call in flight upstream
// and still answers it, which mcp-go does not once a request's context has ended).
func serveOn(ctx context.Context, h http.Handler, ln net.Listener, opts frontdoor.HTTPServerOptions, cancelRequests bool) error {
	requests, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	srv := frontdoor.NewHTTPServer(h, opts)
	srv.BaseContext = func(net.Listener) context.Context { return requests }
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	if cancelRequests {
		cancel()
	}
	shutdownCtx, stop := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer stop()
	err := srv.Shutdown(shutdownCtx)
	if serveErr := <-errc; !errors.Is(serveErr, http.ErrServerClosed) {
		return serveErr
	}
	return err
}

// startError places the hub's configuration errors in the file: each collision names the line of
// the upstream that lost the name.
func startError(cfg *config.Config, prof config.Profile, err error) error {
	var errs []error
	for _, e := range unjoin(err) {
		var ce *proxy.CollisionError
		if errors.As(e, &ce) && len(ce.Upstreams) == 2 {
			loser := ce.Upstreams[1]
			e = fmt.Errorf("%s:%d: profiles.%s.upstreams.%s: %w", cfg.File, prof.Lines[loser], prof.Name, loser, e)
		} else {
			e = fmt.Errorf("%s: profile %s: %w", cfg.File, prof.Name, e)
		}
		errs = append(errs, e)
	}
	return errors.Join(errs...)
}

func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// gcPercentUnderLimit is the GOGC serve runs with when a memory limit is set and GOGC is not: on
// the tools/call benchmark about a fifth less CPU per call than 100, for about 11 MB more memory,
// which the limit bounds.
const gcPercentUnderLimit = 400

// tuneGC raises GOGC to gcPercentUnderLimit when the process has a memory limit (GOMEMLIMIT) and no
// GOGC of its own, and says whether it did.
func tuneGC(getenv func(string) (string, bool), log *slog.Logger) bool {
	if _, set := getenv("GOGC"); set || debug.SetMemoryLimit(-1) == math.MaxInt64 {
		return false
	}
	debug.SetGCPercent(gcPercentUnderLimit)
	log.Debug("garbage collector tuned for the memory limit", "gogc", gcPercentUnderLimit,
		"memory_limit_bytes", debug.SetMemoryLimit(-1))
	return true
}

// callerProfiles serves each HTTP caller the profile its token names (http.tokens, http.oidc), with
// one gateway per profile besides own: a caller's requests reach only its profile's server. Those
// gateways share this one's metrics, audit log, tracing and state, and close with it.
func (g *gateway) callerProfiles(ctx context.Context, own *proxy.Server) (http.Handler, error) {
	cfg := g.cfg
	for i, t := range cfg.HTTP.Tokens { // the names quotas and audit records use
		g.log.Info("bearer token principal", "tokens_index", i, "principal", frontdoor.TokenFingerprint(t.Token),
			"profile", cmp.Or(t.Profile, g.prof.Name))
	}
	handlers := map[string]http.Handler{}
	for _, name := range cfg.HTTP.ServedProfiles() {
		if name == g.prof.Name {
			handlers[name] = own.HTTPHandler()
			continue
		}
		p, err := cfg.Profile(name)
		if err != nil {
			return nil, err
		}
		sib := &gateway{e: g.e, cfg: cfg, prof: p, log: g.log, metrics: g.metrics, audit: g.audit, tracing: g.tracing}
		g.onClose(sib.Close)
		if err := sib.Start(ctx); err != nil {
			return nil, fmt.Errorf("%s: profile %s: %w", cfg.File, name, err)
		}
		g.reload.follow(name, sib.hub) // edits of the file apply to it too
		srv, err := sib.server(ctx)
		if err != nil {
			return nil, err
		}
		sib.onClose(srv.Close)
		stop := context.AfterFunc(ctx, srv.CancelCalls) // at shutdown, cancel the calls in flight upstream
		sib.onClose(func() { stop() })
		handlers[name] = srv.HTTPHandler()
		g.log.Info("serving a profile to the callers it is mapped to", "profile", name, "upstreams", len(p.Upstreams))
	}
	return frontdoor.ByProfile(own.HTTPHandler(), handlers), nil
}
