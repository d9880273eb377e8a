package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcp-router/mcp-router/state"
)

func newReloadCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "reload",
		Short: "Ask the gateways running on this machine to read their profile file again now",
		Long: `Every mcp-router serve watches the profile file it loaded and applies an edit
within a second: the upstreams the edit adds, removes or changes start, stop or
restart; the others keep their connections and clients stay connected. An edit
that does not load is refused, with its file:line in the log and in status, and
the running configuration stays. Edits outside the served profile's upstreams
(http, limits, routing, ...) apply at the next start; the log names them.

reload asks every gateway status lists (on Unix, with SIGHUP) to read its file
now, for example after changing a variable the file expands. On Windows there is
no such signal: reload says so, and gateways still apply edits by themselves.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, _, st, err := e.configState(cmd.Context())
			if err != nil {
				return err
			}
			reg := st.Gateways()
			if state.Shared(reg) {
				return errors.New("the gateway registry is a database shared by several machines: " +
					"send SIGHUP to the gateway's process on its machine, or edit its profile file (applied within a second)")
			}
			live, err := liveGateways(cmd.Context(), reg, time.Now())
			if err != nil {
				return err
			}
			return e.askReloads(live)
		},
	}
}

// askReloads asks each gateway in live to reload and says which it asked.
func (e *env) askReloads(live []gatewayStatus) error {
	if len(live) == 0 {
		fmt.Fprintln(e.stdout, "no gateway running")
		return nil
	}
	var errs []error
	for _, g := range live {
		if err := askReload(g.PID); err != nil {
			if errors.Is(err, errReloadUnsupported) {
				return err
			}
			errs = append(errs, fmt.Errorf("gateway pid %d: %w", g.PID, err))
			continue
		}
		fmt.Fprintf(e.stdout, "asked gateway pid %d (profile %s, config %s) to reload\n", g.PID, g.Profile, g.Config)
	}
	return errors.Join(errs...)
}

var errReloadUnsupported = errors.New("reload is not supported on this system (no SIGHUP); " +
	"each gateway applies edits of its profile file within a second by itself")
