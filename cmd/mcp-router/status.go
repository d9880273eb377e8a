package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	mcprouter "github.com/mcp-router/mcp-router"
	"github.com/mcp-router/mcp-router/builtin"
	"github.com/mcp-router/mcp-router/cmd/mcp-router/internal/config"
	"github.com/mcp-router/mcp-router/internal/printable"
	"github.com/mcp-router/mcp-router/proxy"
	"github.com/mcp-router/mcp-router/state"
)

// Gateway registration: each serve writes its row every heartbeatEvery; a row whose heartbeat is
// older than staleAfter, or whose process is gone, is a gateway that died without removing it, and
// status prunes it.
const (
	heartbeatEvery = 3 * time.Second
	staleAfter     = 5 * heartbeatEvery
)

// gatewaySnapshot is what a gateway tells status about itself in each heartbeat.
type gatewaySnapshot struct {
	Upstreams    []upstreamSnapshot  `json:"upstreams"`
	Calls        uint64              `json:"calls"`
	Failed       uint64              `json:"failed"`
	Cancelled    uint64              `json:"cancelled"` // by the client; not failures
	RecentErrors []proxy.CallFailure `json:"recent_errors,omitempty"`
	// RecentCalls are the latest calls, newest first, for the console.
	RecentCalls []proxy.Call `json:"recent_calls,omitempty"`
	// Config says how edits of the profile file went (reload.go).
	Config *configSnapshot `json:"config,omitempty"`
}

type upstreamSnapshot struct {
	Name     string `json:"name"`
	State    string `json:"state"`
	Tools    int    `json:"tools"`
	Restarts int    `json:"restarts,omitempty"`
	Err      string `json:"error,omitempty"`
	Protocol string `json:"protocol,omitempty"`
	Blocked  int    `json:"blocked,omitempty"`
}

// snapshotCalls is how many recent calls a snapshot carries.
const snapshotCalls = 20

// maxErrLen bounds an upstream's error in the snapshot.
const maxErrLen = 300

func snapshot(hub *proxy.Hub, m *proxy.Metrics) gatewaySnapshot {
	var s gatewaySnapshot
	for _, u := range hub.Status() {
		s.Upstreams = append(s.Upstreams, upstreamSnapshot{Name: u.Name, State: string(u.State), Tools: u.Tools,
			Restarts: u.Restarts, Err: firstLine(notConnected(u), maxErrLen), Protocol: u.Protocol, Blocked: u.Blocked})
	}
	s.Calls, s.Failed, s.RecentErrors = m.Calls()
	s.Cancelled = m.Cancelled()
	calls := m.RecentCalls()
	s.RecentCalls = calls[:min(len(calls), snapshotCalls)]
	return s
}

// notConnected is what status and the console show of an upstream not connected: why (starting for
// how long, or its error); nothing for a connected one.
func notConnected(u proxy.Status) string {
	if u.State == proxy.StateConnected {
		return ""
	}
	return why(u)
}

// register registers this serve in the state's registry and keeps its heartbeat, with a fresh
// snapshot, until the gateway closes, which removes the row. Failures are logged: status is a
// convenience, never a reason not to serve.
func (g *gateway) register(ctx context.Context, httpAddr string) {
	row := state.Gateway{
		ID: newGatewayID(), PID: os.Getpid(), Started: time.Now().UTC(), Profile: g.prof.Name,
		Config: g.cfg.File, Transport: "stdio", Addr: httpAddr, Version: gatewayVersion(),
	}
	if httpAddr != "" {
		row.Transport = "http"
	}
	if abs, err := filepath.Abs(g.cfg.File); err == nil && g.cfg.File != "" {
		row.Config = abs
	}
	reg, id := g.state(ctx).Gateways(), row.ID
	g.onClose(func() { // after the heartbeat stopped
		rmCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		if err := reg.Remove(rmCtx, id); err != nil {
			g.log.Warn("gateway not unregistered", "err", err)
		}
	})
	beat := func(ctx context.Context) {
		s := snapshot(g.hub, g.metrics)
		s.Config = g.reload.snapshot()
		snap, err := json.Marshal(s)
		if err != nil || len(snap) > state.MaxSnapshot {
			snap = nil // a snapshot is a convenience; the row still says the gateway runs
		}
		row.Heartbeat, row.Snapshot = time.Now().UTC(), snap
		if err := reg.Beat(ctx, row); err != nil && ctx.Err() == nil {
			g.log.Debug("gateway heartbeat not written", "err", err)
		}
	}
	runCtx := context.WithoutCancel(ctx)
	beat(runCtx)
	g.spawn(runCtx, func(ctx context.Context) {
		t := time.NewTicker(heartbeatEvery)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				beat(ctx)
			}
		}
	})
}

func newGatewayID() string {
	b := make([]byte, 8)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// gatewayStatus is one live gateway as status prints it.
type gatewayStatus struct {
	state.Gateway
	Snapshot *gatewaySnapshot `json:"snapshot,omitempty"`
}

// where is how the gateway serves: "stdio", or "http ADDR".
func (gs gatewayStatus) where() string {
	return strings.TrimSpace(gs.Transport + " " + gs.Addr)
}

func newStatusCmd(e *env) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "status [--json]",
		Short: "Show the gateways running on this machine, their upstreams, calls and recent errors",
		Long: `Every mcp-router serve registers itself in state_dir and writes a heartbeat every few
seconds. status lists the live ones (rows of gateways that died are removed): process id,
start time, profile, configuration file, transport, each upstream's state, calls served
and recent errors. It exits 0 when none runs. With state.url, it lists the gateways of every
machine using that database.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, st, err := e.statusState(cmd.Context())
			if cfg == nil {
				return err
			} else if err != nil {
				return fmt.Errorf("%s; a gateway started on it keeps its state in memory, and status cannot list it", stateNotice(stateProblemText(cfg, err)))
			}
			live, err := liveGateways(cmd.Context(), st.Gateways(), time.Now())
			if err != nil {
				return err
			}
			if asJSON {
				if live == nil {
					live = []gatewayStatus{}
				}
				return printJSON(e, live)
			}
			return printStatus(e, live)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

// statusState loads the configuration and opens its state. When the profile file does not load,
// as when an edit broke it while gateways serve on the configuration they loaded before, it says so
// and opens the default state instead: the gateways and the refused edit are what one needs to see
// then.
func (e *env) statusState(ctx context.Context) (*config.Config, stateStore, error) {
	cfg, _, err := e.loadConfig() // status needs no profile: a cfg with a profile error serves
	if cfg == nil {
		def, derr := config.Load(config.LoadOptions{Default: mcprouter.DefaultProfiles, Getenv: e.getenv, Builtins: builtin.Names()})
		if derr != nil {
			return nil, nil, err
		}
		fmt.Fprintf(e.stderr, "mcp-router: %v\nthe gateways below are those of the default state directory, %s (a state_dir or state.url in that file is not read while it does not load)\n", err, def.StateDir)
		cfg = def
	}
	st, err := e.cliState(ctx, cfg)
	return cfg, st, err
}

// liveGateways returns the registered gateways that are alive and removes the others' rows. In a
// shared registry a PID may be another machine's, so only the heartbeat tells.
func liveGateways(ctx context.Context, reg state.Registry, now time.Time) ([]gatewayStatus, error) {
	local := !state.Shared(reg)
	rows, err := reg.Gateways(ctx)
	if err != nil {
		return nil, err
	}
	var live []gatewayStatus
	var stale []string
	for _, g := range rows {
		if now.Sub(g.Heartbeat) > staleAfter || local && !processAlive(g.PID) {
			stale = append(stale, g.ID)
			continue
		}
		gs := gatewayStatus{Gateway: g}
		var snap gatewaySnapshot
		if json.Unmarshal(g.Snapshot, &snap) == nil {
			gs.Snapshot = &snap
		}
		gs.Gateway.Snapshot = nil
		live = append(live, gs)
	}
	if err := reg.Remove(ctx, stale...); err != nil {
		return nil, err
	}
	return live, nil
}

func printStatus(e *env, live []gatewayStatus) error {
	if len(live) == 0 {
		fmt.Fprintln(e.stdout, "no gateway running")
		return nil
	}
	for i, g := range live {
		if i > 0 {
			fmt.Fprintln(e.stdout)
		}
		fmt.Fprintf(e.stdout, "gateway pid %d, profile %s, %s, version %s, up since %s\n",
			g.PID, printable.Line(g.Profile), printable.Line(g.where()), printable.Line(g.Version), g.Started.Local().Format("2006-01-02 15:04:05"))
		if g.Config != "" {
			fmt.Fprintf(e.stdout, "  config: %s\n", printable.Line(g.Config))
		}
		if g.Snapshot == nil {
			continue
		}
		s := g.Snapshot
		tw := newTable(e.stdout, "  UPSTREAM\tSTATE\tTOOLS\tERROR")
		for _, u := range s.Upstreams {
			fmt.Fprintf(tw, "  %s\t%s\t%d\t%s\n", printable.Line(u.Name), u.State, u.Tools, printable.Line(u.Err))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		for _, line := range s.Config.lines() {
			fmt.Fprintf(e.stdout, "  %s\n", line)
		}
		fmt.Fprintf(e.stdout, "  calls served: %d (%s)\n", s.Calls, failedCancelled(s.Failed, s.Cancelled))
		for _, f := range s.RecentErrors {
			fmt.Fprintf(e.stdout, "    %s %s on %s: %s\n", f.At.Local().Format("15:04:05"), printable.Line(f.Tool), printable.Line(f.Upstream), printable.Line(f.Kind))
		}
	}
	return nil
}

// failedCancelled says how many calls failed and, when any, how many the
// client cancelled: "2 failed, 1 cancelled".
func failedCancelled(failed, cancelled uint64) string {
	if cancelled == 0 {
		return fmt.Sprintf("%d failed", failed)
	}
	return fmt.Sprintf("%d failed, %d cancelled", failed, cancelled)
}
