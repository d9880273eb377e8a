package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"

	"github.com/mcp-router/mcp-router/audit"
	"github.com/mcp-router/mcp-router/cmd/mcp-router/internal/config"
	"github.com/mcp-router/mcp-router/proxy/integrity"
	"github.com/mcp-router/mcp-router/proxy/upstreamauth"
	"github.com/mcp-router/mcp-router/routing"
	"github.com/mcp-router/mcp-router/routing/lessons"
	"github.com/mcp-router/mcp-router/state"
)

// stateStore is the persisted state a command works with: state.db, a
// PostgreSQL database (state.url), or memory for a run whose state cannot
// be opened.
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

// runState returns the state for a gateway run, opening it on first use;
// when it cannot be opened, memory for this run with one warning, kept in
// e.stateProblem for doctor, the console and the pins (which then fail
// closed: see hubOptions). The command's caller closes it with closeState.
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

// stateProblemText says why the state cannot be used, naming the file (or
// the database URL, without its password) first.
func stateProblemText(cfg *config.Config, err error) string {
	why, file := err, filepath.Join(cfg.StateDir, state.FileName)
	var oe *state.OpenError
	if errors.As(err, &oe) {
		why, file = oe.Err, oe.Path
	}
	return fmt.Sprintf("%v; %s", why, file)
}

// stateNotice is what status, doctor and the console say of a state that
// cannot be used.
func stateNotice(problem string) string {
	return "state: in memory (not shared, not kept): " + problem +
		". Pins cannot be checked, so tools of upstreams other than the built-in ones are not served; fix the state directory, or set state_dir"
}

// cliState opens the state (state.url's database, else state.db) for a
// command that reads or changes it; failing, a *state.OpenError naming the
// file or the URL without its password.
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

// configState loads the configuration and opens its state, for the
// commands that read or change the state; cfg is nil when the
// configuration did not load.
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
