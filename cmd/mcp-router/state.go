package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/mcp-router/mcp-router/audit"
	"github.com/mcp-router/mcp-router/cmd/mcp-router/internal/config"
	"github.com/mcp-router/mcp-router/proxy/integrity"
	"github.com/mcp-router/mcp-router/proxy/upstreamauth"
	"github.com/mcp-router/mcp-router/routing"
	"github.com/mcp-router/mcp-router/routing/lessons"
	"github.com/mcp-router/mcp-router/state"
)

// stateStore is the persisted state a command works with: state.db, a PostgreSQL database
// (state.url), or memory for a run whose state cannot be opened.
type stateStore interface {
	Lessons() lessons.Store
	Pins() integrity.PinStore
	Vectors() routing.VectorStore
	Gateways() state.Registry
	Audit() audit.Store
	Credentials() upstreamauth.Store
	Quotas() state.QuotaCounts
	EndedSessions() state.EndedSessions
	Close() error
}

var (
	_ stateStore = (*state.DB)(nil)
	_ stateStore = (*state.PG)(nil)
)

// runState returns the state for a gateway run, opening it on first use; when it cannot be opened,
// memory for this run with one warning, kept in e.stateProblem for doctor, the console and the pins
// (which then fail closed: see hubOptions). The command's caller closes it with closeState.
func (e *env) runState(ctx context.Context, cfg *config.Config, log *slog.Logger) stateStore {
	st, err := e.cliState(ctx, cfg)
	if err == nil {
		return st
	}
	e.stateProblem = stateProblemText(cfg, err)
	log.Warn(fmt.Sprintf("state kept in memory for this run (not shared, not kept): %s", e.stateProblem))
	e.state = state.NewMemory()
	return e.state
}

// stateProblemText says why the state cannot be used, naming the file (or the database URL, without
// its password) first.
func stateProblemText(cfg *config.Config, err error) string {
	why, file := err, filepath.Join(cfg.StateDir, state.FileName)
	var oe *state.OpenError
	if errors.As(err, &oe) {
		why, file = oe.Err, oe.Path
	}
	return fmt.Sprintf("%v; %s", why, file)
}

// stateNotice is what status, doctor and the console say of a state that cannot be used.
func stateNotice(problem string) string {
	return "state: in memory (not shared, not kept): " + problem +
		". Pins cannot be checked, so tools of upstreams other than the built-in ones are not served; fix the state directory, or set state_dir"
}

// cliState opens the state (state.url's database, else state.db) for a command that reads or
// changes it; failing, a *state.OpenError naming the file or the URL without its password.
func (e *env) cliState(ctx context.Context, cfg *config.Config) (st stateStore, err error) {
	switch {
	case e.state != nil:
		return e.state, nil
	case cfg.State.URL != "":
		st, err = state.OpenPostgres(ctx, state.PGOptions{URL: cfg.State.URL, Logger: e.logger(cfg)})
	default:
		st, err = state.Open(ctx, state.Options{Dir: cfg.StateDir})
	}
	if err != nil {
		return nil, err
	}
	e.state = st
	return st, nil
}

// configState loads the configuration and opens its state, for the commands that read or change the
// state; cfg is nil when the configuration did not load.
func (e *env) configState(ctx context.Context) (*config.Config, config.Profile, stateStore, error) {
	cfg, prof, err := e.loadConfig()
	if err != nil {
		return nil, prof, nil, err
	}
	st, err := e.cliState(ctx, cfg)
	return cfg, prof, st, err
}

// closeState closes the state a command opened, if any.
func (e *env) closeState() error {
	if e.state == nil {
		return nil
	}
	err := e.state.Close()
	e.state = nil
	return err
}

func newLessonsCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "lessons",
		Short: "Inspect and undo what routing learned (from detours and routing_feedback)",
		Long: `Routing remembers lessons in state_dir: "for requests like Q, use (or avoid) tool T",
learned when a session needed several searches before a tool worked, or told through
the routing_feedback tool. Similar later requests are ranked with them. These commands
read and change that memory, shared by every gateway using the same state_dir (or the
same state.url database); running
gateways pick changes up within seconds.`,
	}
	var asJSON bool
	list := &cobra.Command{
		Use: "list [--json]", Short: "List the lessons", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return e.withLessons(cmd.Context(), func(m *lessons.Memory) error {
				if asJSON {
					return printJSON(e, m.List())
				}
				tw := newTable(e.stdout, "ID\tPOLARITY\tTOOL\tSOURCE\tUSES\tQUERY")
				for _, l := range m.List() {
					fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d\t%s\n", l.ID, l.Polarity, l.Tool, l.Source, l.Uses, firstLine(l.Query, 60))
				}
				return tw.Flush()
			})
		},
	}
	list.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	forget := &cobra.Command{
		Use: "forget ID...", Short: "Forget lessons by id", Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return e.withLessons(cmd.Context(), func(m *lessons.Memory) error {
				for _, a := range args {
					id, err := strconv.ParseInt(a, 10, 64)
					if err != nil {
						return fmt.Errorf("%q is not a lesson id", a)
					}
					if err := m.Forget(cmd.Context(), id); err != nil {
						return fmt.Errorf("forgetting lesson %d: %w", id, err)
					}
					fmt.Fprintf(e.stdout, "forgot lesson %d\n", id)
				}
				return nil
			})
		},
	}
	clear := &cobra.Command{
		Use: "clear", Short: "Forget every lesson", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return e.withLessons(cmd.Context(), func(m *lessons.Memory) error {
				n := m.Len()
				if err := m.Clear(cmd.Context()); err != nil {
					return err
				}
				fmt.Fprintf(e.stdout, "forgot %d lessons\n", n)
				return nil
			})
		},
	}
	cmd.AddCommand(list, forget, clear)
	return cmd
}

// withLessons opens the experience memory of the state directory for fn.
func (e *env) withLessons(ctx context.Context, fn func(*lessons.Memory) error) error {
	cfg, _, st, err := e.configState(ctx)
	if err != nil {
		return err
	}
	mem, err := lessons.NewMemory(ctx, st.Lessons(), lessons.MemoryOptions{MaxBytes: cfg.Limits.LessonsBytes})
	if err != nil {
		return err
	}
	return fn(mem)
}
