package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcp-router/mcp-router/builtin"
	"github.com/mcp-router/mcp-router/cmd/mcp-router/internal/config"
	"github.com/mcp-router/mcp-router/proxy"
	"github.com/mcp-router/mcp-router/proxy/integrity"
)

func newServeCmd(e *env) *cobra.Command {
	var httpAddr, metricsAddr string
	cmd := &cobra.Command{
		Use:   "serve [--http ADDR]",
		Short: "Run the gateway for an MCP client (stdio by default)",
		Long: `Run the gateway. By default it speaks MCP over stdin and stdout, as an MCP client
such as Claude Desktop expects when it starts a server; logs go to stderr. With
--http ADDR it serves streamable HTTP at http://ADDR/mcp instead.

On start it connects every upstream of the profile at once and logs which
connected and how many tools each gave; an upstream that fails is retried in the
background and does not hold the others up.`,
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
	if httpAddr != "" {
		if err := cfg.CheckHTTP(); err != nil {
			return err
		}
		if err := proxy.CheckListen(httpAddr, cfg.HTTP.BearerTokens); err != nil {
			return err
		}
	}
	log := e.logger(cfg)
	e.metrics = proxy.NewMetrics()
	hub, err := e.startHub(ctx, cfg, prof, log)
	if err != nil {
		return err
	}
	defer hub.Close()
	st := e.runState(ctx, cfg, log)
	mem, err := openLessons(ctx, cfg, prof, st.Lessons(), log)
	if err != nil {
		return err
	}
	if mem != nil {
		memCtx, stopMem := context.WithCancel(context.WithoutCancel(ctx))
		memDone := make(chan struct{})
		go func() {
			defer close(memDone)
			if err := mem.Run(memCtx, time.Minute); err != nil {
				log.Warn("saving routing lessons", "err", err)
			}
		}()
		defer func() { stopMem(); <-memDone }() // the last flush, before the store closes
	}
	srv, err := newServer(cfg, prof, hub, log, mem, st.Vectors())
	if err != nil {
		return err
	}
	defer srv.Close()
	defer e.registerGateway(ctx, cfg, prof, hub, httpAddr, log)()
	if httpAddr == "" {
		log.Info("serving stdio", "profile", prof.Name, "tools", len(hub.Catalog().Tools))
		return e.serveStdio(ctx, srv, metricsAddr, log)
	}
	defer context.AfterFunc(ctx, srv.CancelCalls)() // at shutdown, cancel the calls in flight upstream
	var hosts []string
	if h, _, _ := net.SplitHostPort(httpAddr); h != "" && h != "0.0.0.0" && h != "::" {
		hosts = append(hosts, h)
	}
	guard := proxy.GuardOptions{
		BearerTokens: cfg.HTTP.BearerTokens, AllowedOrigins: cfg.HTTP.AllowedOrigins, AllowedHosts: hosts, Logger: log,
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", proxy.Guard(srv.HTTPHandler(), guard))
	mux.Handle("/metrics", proxy.Guard(e.metrics.Handler(), guard))
	return serveHTTP(ctx, mux, httpAddr, log)
}

// serveStdio serves one client on stdin and stdout, and the metrics on
// metricsAddr when it is set; it ends when either ends.
func (e *env) serveStdio(ctx context.Context, srv *proxy.Server, metricsAddr string, log *slog.Logger) error {
	if metricsAddr == "" {
		return srv.ServeStdio(ctx, e.stdin, e.stdout)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	metricsDone := make(chan error, 1)
	go func() { metricsDone <- proxy.ServeMetrics(ctx, metricsAddr, e.metrics, log) }()
	err := srv.ServeStdio(ctx, e.stdin, e.stdout)
	cancel()
	if merr := <-metricsDone; err == nil && merr != nil {
		err = fmt.Errorf("metrics: %w", merr)
	}
	return err
}

// startHub connects the profile's upstreams and logs how each did.
func (e *env) startHub(ctx context.Context, cfg *config.Config, prof config.Profile, log *slog.Logger) (*proxy.Hub, error) {
	for _, w := range cfg.Warnings {
		log.Warn("config", "warning", w)
	}
	opts := proxy.Options{
		Upstreams: prof.Upstreams,
		Builtin:   builtin.New,
		Reserved:  proxy.ReservedNames(),
		Logger:    log,
		Version:   version,
		Poisoning: integrity.Policy(prof.Integrity.Poisoning),
		Metrics:   e.metrics,
	}
	if opts.Poisoning == "" {
		opts.Poisoning = integrity.Warn
	}
	if prof.Integrity.Pins {
		store, err := integrity.OpenStore(e.runState(ctx, cfg, log).Pins())
		if err != nil {
			return nil, fmt.Errorf("%s: tool pins: %w", cfg.File, err)
		}
		opts.Pins = store
	}
	guardChildren(prof.Upstreams)
	hub := proxy.NewHub(opts)
	if err := hub.Start(ctx); err != nil {
		hub.Close()
		return nil, startError(cfg, prof, err)
	}
	for _, s := range hub.Status() {
		if s.State == proxy.StateConnected {
			log.Info("upstream ready", "upstream", s.Name, "tools", s.Tools)
		} else {
			log.Warn("upstream not ready", "upstream", s.Name, "state", s.State, "err", s.Err)
		}
	}
	return hub, nil
}

// serveHTTP serves h until ctx ends, then shuts down gracefully.
func serveHTTP(ctx context.Context, h http.Handler, addr string, log *slog.Logger) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", addr, err)
	}
	// Requests run under their own context, which shutdown cancels first:
	// the calls in flight are cancelled upstream (notifications/cancelled)
	// and clients' open event streams end, so Shutdown need not wait them out.
	requests, cancelRequests := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelRequests()
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second,
		BaseContext: func(net.Listener) context.Context { return requests }}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	log.Info("serving streamable HTTP", "url", "http://"+ln.Addr().String()+"/mcp")
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	cancelRequests()
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	err = srv.Shutdown(shutdownCtx)
	if serveErr := <-errc; !errors.Is(serveErr, http.ErrServerClosed) {
		return serveErr
	}
	return err
}

// startError places the hub's configuration errors in the file: each
// collision names the line of the upstream that lost the name.
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
