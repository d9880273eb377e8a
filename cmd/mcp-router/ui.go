package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcp-router/mcp-router/console"
	"github.com/mcp-router/mcp-router/internal/loopback"
	"github.com/mcp-router/mcp-router/proxy"
	"github.com/mcp-router/mcp-router/proxy/frontdoor"
	"github.com/mcp-router/mcp-router/routing"
	"github.com/mcp-router/mcp-router/state"
)

func newUICmd(e *env) *cobra.Command {
	var addr string
	cmd := &cobra.Command{
		Use:   "ui [--addr 127.0.0.1:0]",
		Short: "Serve the web console on loopback, for gateways that serve stdio",
		Long: `Serve the web console (the pages serve --http has at /ui) on a loopback address:
the upstreams of every gateway running on this machine, from their heartbeats
(read-only: restart an upstream from the console of serve --http), the profile's
catalog and routing playground (the console connects to the profile's upstreams
itself for them), the tool pins waiting for approval, the routing lessons and the
latest calls. It prints the address and a token made for this run: paste the
token into the login form.`,
		Example: `  mcp-router ui
  mcp-router ui --addr 127.0.0.1:7070`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return e.ui(cmd.Context(), addr)
		},
	}
	cmd.Flags().StringVar(&addr, "addr", "127.0.0.1:0", "loopback address to serve on (port 0 picks a free one)")
	return cmd
}

func (e *env) ui(ctx context.Context, addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--addr %q: %w", addr, err)
	}
	if !loopback.Host(host) {
		return fmt.Errorf("--addr %q: the console of mcp-router ui serves loopback only (127.0.0.1, ::1 or localhost)", addr)
	}
	cfg, prof, err := e.loadConfig()
	if err != nil {
		return err
	}
	st, err := e.cliState(ctx, cfg)
	if err != nil {
		return err
	}
	ln, err := listen(addr)
	if err != nil {
		return err
	}
	defer ln.Close()
	g := e.newGateway(cfg, prof, parts{})
	defer g.Close()
	if err := g.Start(ctx); err != nil {
		return err
	}
	token := newGatewayID() + newGatewayID()
	door := frontdoor.NewChecks(frontdoor.Options{Tokens: []frontdoor.Token{{Token: token, Admin: true}}}) // the operator's own
	gw := &registryGateway{reg: st.Gateways()}
	c, err := g.console(ctx, door, gw, func(ctx context.Context) []string { return append(e.notices(), gw.notes(ctx)...) })
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "console: http://%s/ui/\ntoken:   %s\n", ln.Addr(), token)
	g.log.Info("serving the console", "url", "http://"+ln.Addr().String()+"/ui/")
	return serveOn(ctx, c, ln, frontdoor.HTTPServerOptions{}, true)
}

// mountConsole serves the console at /ui on mux, behind the front door's
// Host, Origin and token checks, with the serve's hub.
func (g *gateway) mountConsole(ctx context.Context, mux *http.ServeMux, guard frontdoor.Options) error {
	c, err := g.console(ctx, frontdoor.NewChecks(guard), &hubGateway{hub: g.hub, m: g.metrics},
		func(context.Context) []string { return append(g.e.notices(), g.reload.snapshot().lines()...) })
	if err != nil {
		return err
	}
	mux.Handle("/ui", c)
	mux.Handle("/ui/", c)
	return nil
}

// console is the web console of the gateway's catalog, pins and lessons,
// behind door, with gw's upstreams and activity and notes on every page.
func (g *gateway) console(ctx context.Context, door *frontdoor.Checks, gw console.Gateway, notes func(context.Context) []string) (*console.Console, error) {
	st := g.state(ctx)
	r, err := g.router(ctx)
	if err != nil {
		return nil, err
	}
	opts := console.Options{Door: door, Gateway: gw, Catalog: &hubCatalog{hub: g.hub, r: r, log: g.log}, Logger: g.log, Notes: notes}
	// No pins when the state holding them cannot be used: an approval
	// kept in memory approves nothing.
	if g.prof.Integrity.Pins && g.e.stateProblem == "" {
		opts.Pins = st.Pins()
	}
	if g.prof.Routing.Lessons {
		opts.Lessons = st.Lessons()
	}
	// The calls that wait for an answer are those of serve's own hub; a
	// nil *Queue would make a non-nil interface.
	if _, own := gw.(*hubGateway); own && g.approvals != nil {
		opts.Approvals = g.approvals
		g.approvals.Serve()
	}
	return console.New(opts)
}

// notices are the degraded states the console shows on every page.
func (e *env) notices() []string {
	if e.stateProblem == "" {
		return nil
	}
	return []string{stateNotice(e.stateProblem)}
}

// hubGateway is the console's view of a serve's own hub.
type hubGateway struct {
	hub *proxy.Hub
	m   *proxy.Metrics
}

func (g *hubGateway) Upstreams(context.Context) ([]console.Upstream, error) {
	var out []console.Upstream
	for _, s := range g.hub.Status() {
		out = append(out, console.Upstream{Name: s.Name, State: string(s.State), Protocol: s.Protocol, Tools: s.Tools,
			Blocked: s.Blocked, Restarts: s.Restarts, Err: notConnected(s), Since: s.Since, Restartable: s.State != proxy.StateDisabled})
	}
	return out, nil
}

func (g *hubGateway) Restart(_ context.Context, upstream string) error {
	return g.hub.Restart(upstream)
}

func (g *hubGateway) Activity(context.Context) (console.Activity, error) {
	var a console.Activity
	a.Calls, a.Failed, _ = g.m.Calls()
	a.Cancelled = g.m.Cancelled()
	for _, c := range g.m.RecentCalls() {
		a.Recent = append(a.Recent, console.Call{At: c.At, Upstream: c.Upstream, Tool: c.Tool, Dur: c.Dur, Kind: c.Kind})
	}
	return a, nil
}

// registryGateway is the console's view of the gateways running on the
// machine, from their heartbeats: read-only.
type registryGateway struct{ reg state.Registry }

// live are the running gateways that told their state in a heartbeat.
func (g *registryGateway) live(ctx context.Context) ([]gatewayStatus, error) {
	all, err := liveGateways(ctx, g.reg, time.Now())
	return slices.DeleteFunc(all, func(gs gatewayStatus) bool { return gs.Snapshot == nil }), err
}

func gatewayLabel(gs gatewayStatus) string {
	return fmt.Sprintf("pid %d · %s · %s", gs.PID, gs.Profile, gs.where())
}

func (g *registryGateway) Upstreams(ctx context.Context) ([]console.Upstream, error) {
	live, err := g.live(ctx)
	if err != nil {
		return nil, err
	}
	var out []console.Upstream
	for _, gs := range live {
		for _, u := range gs.Snapshot.Upstreams {
			out = append(out, console.Upstream{Gateway: gatewayLabel(gs), Name: u.Name, State: u.State, Protocol: u.Protocol,
				Tools: u.Tools, Blocked: u.Blocked, Restarts: u.Restarts, Err: u.Err})
		}
	}
	return out, nil
}

func (g *registryGateway) Restart(context.Context, string) error { return console.ErrReadOnly }

// notes are what the running gateways say of edits of their profile files.
func (g *registryGateway) notes(ctx context.Context) []string {
	live, err := g.live(ctx)
	if err != nil {
		return nil
	}
	var out []string
	for _, gs := range live {
		for _, line := range gs.Snapshot.Config.lines() {
			out = append(out, gatewayLabel(gs)+": "+line)
		}
	}
	return out
}

func (g *registryGateway) Activity(ctx context.Context) (console.Activity, error) {
	live, err := g.live(ctx)
	if err != nil {
		return console.Activity{}, err
	}
	var a console.Activity
	for _, gs := range live {
		a.Calls += gs.Snapshot.Calls
		a.Failed += gs.Snapshot.Failed
		a.Cancelled += gs.Snapshot.Cancelled
		for _, c := range gs.Snapshot.RecentCalls {
			a.Recent = append(a.Recent, console.Call{At: c.At, Gateway: gatewayLabel(gs), Upstream: c.Upstream, Tool: c.Tool, Dur: c.Dur, Kind: c.Kind})
		}
	}
	slices.SortFunc(a.Recent, func(x, y console.Call) int { return y.At.Compare(x.At) })
	return a, nil
}

// hubCatalog is the console's view of a hub's catalog, with a router
// indexing it for the playground.
type hubCatalog struct {
	hub *proxy.Hub
	r   *routing.Router
	log *slog.Logger

	mu      sync.Mutex
	indexed *proxy.Catalog // the catalog r holds
}

func (h *hubCatalog) Tools(context.Context) ([]console.Tool, []string, error) {
	c := h.hub.Catalog()
	tools := make([]console.Tool, 0, len(c.Tools))
	for _, t := range c.Tools {
		tools = append(tools, console.Tool{Name: t.Name, Upstream: t.Upstream, Domain: t.Domain, Description: t.Def.Description})
	}
	var warnings []string
	for _, p := range append(slices.Clone(c.Problems), c.Warnings...) {
		warnings = append(warnings, p.Text)
	}
	return tools, warnings, nil
}

func (h *hubCatalog) Route(ctx context.Context, req routing.Request) (routing.Decision, error) {
	h.mu.Lock()
	if c := h.hub.Catalog(); c != h.indexed {
		indexCatalog(ctx, h.r, c.RoutingTools(), h.log)
		h.indexed = c
	}
	h.mu.Unlock()
	return h.r.Route(ctx, req), nil
}
