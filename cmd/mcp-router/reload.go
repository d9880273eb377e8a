package main

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcp-router/mcp-router/builtin"
	"github.com/mcp-router/mcp-router/cmd/mcp-router/internal/config"
	"github.com/mcp-router/mcp-router/proxy"
	"github.com/mcp-router/mcp-router/state"
)

// pollEvery is how often serve reads its profile file for an edit. Polling the content sees every
// edit whatever the file system's time resolution, survives editors that save by renaming, and
// needs no notification API.
const pollEvery = time.Second

// reloader applies edits of serve's profile file to its running hubs: the upstreams an edit adds,
// removes or changes start, stop or restart; the others and every client session stay. An edit that
// does not load is refused. Other sections apply at the next start.
type reloader struct {
	file, profile string
	// load reads file again; resolve makes a profile's upstreams ready for its hub (authorizers,
	// the child guard).
	load    func() (*config.Config, config.Profile, error)
	resolve func(context.Context, *config.Config, config.Profile) []proxy.UpstreamConfig
	log     *slog.Logger

	// started is the configuration serve started with: what the sections other than upstreams still
	// follow.
	started     *config.Config
	startedProf config.Profile

	seen [sha256.Size]byte // the file's content as last read; watch's own

	mu       sync.Mutex
	hubs     map[string]*proxy.Hub // by profile: the served one's, and those callers are mapped to
	refused  string                // why the file's content is not the running one; "" when it is
	restart  []string              // keys edited since the start that apply at the next one
	reloaded time.Time             // when an edit was last applied
}

// newReloader is the reloader of serve's cfg.File. The built-in default has no file: nothing is
// watched then, and a reload asked says so.
func (g *gateway) newReloader() *reloader {
	cfg, prof, log := g.cfg, g.prof, g.log
	r := &reloader{profile: prof.Name, log: log, started: cfg, startedProf: prof,
		hubs: map[string]*proxy.Hub{prof.Name: g.hub}}
	if cfg.File == "" || cfg.File == config.DefaultName {
		return r
	}
	r.file = cfg.File
	r.load = func() (*config.Config, config.Profile, error) { return g.e.loadFile(r.file, r.profile) }
	r.resolve = func(ctx context.Context, cfg *config.Config, prof config.Profile) []proxy.UpstreamConfig {
		ups := g.e.withAuthorizers(ctx, cfg, prof.Upstreams, log)
		guardChildren(ups)
		return ups
	}
	r.seen, _ = digest(r.file) // an edit from now on is news
	return r
}

// follow makes the hub of profile, one that callers are mapped to, follow edits too.
func (r *reloader) follow(profile string, hub *proxy.Hub) {
	r.mu.Lock()
	r.hubs[profile] = hub
	r.mu.Unlock()
}

// watchConfig runs serve's reloader until the gateway closes: it polls the profile file and reloads
// on each edit and on SIGHUP (`mcp-router reload`).
func (g *gateway) watchConfig(ctx context.Context) {
	g.reload = g.newReloader()
	sig, stopSignals := notifyReload()
	g.onClose(stopSignals) // after the watcher stopped
	g.spawn(ctx, func(ctx context.Context) { g.reload.watch(ctx, sig) })
}

// loadFile loads path (and nothing else) and resolves profile in it.
func (e *env) loadFile(path, profile string) (*config.Config, config.Profile, error) {
	cfg, err := config.Load(config.LoadOptions{Path: path, Getenv: e.getenv, Builtins: builtin.Names()})
	if err != nil {
		return nil, config.Profile{}, err
	}
	p, err := cfg.Profile(profile)
	return cfg, p, err
}

// digest is the hash of path's content.
func digest(path string) ([sha256.Size]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return [sha256.Size]byte{}, err
	}
	return sha256.Sum256(data), nil
}

// watch polls the file and reloads on each edit, and on each signal from sig, until ctx ends.
func (r *reloader) watch(ctx context.Context, sig <-chan os.Signal) {
	var poll <-chan time.Time
	if r.file != "" {
		t := time.NewTicker(pollEvery)
		defer t.Stop()
		poll = t.C
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-poll:
			if r.edited() {
				r.reload(ctx)
			}
		case <-sig:
			r.log.Info("reload asked")
			r.edited() // what is read now is not news at the next poll
			r.reload(ctx)
		}
	}
}

// edited reports whether the file's content changed since it was last read. A file that cannot be
// read (an editor's rename under way, a deletion) is not an edit: the next poll looks again.
func (r *reloader) edited() bool {
	now, err := digest(r.file)
	if err != nil {
		return false
	}
	was := r.seen
	r.seen = now
	return now != was
}

// reload loads the file and applies its upstreams, or refuses it.
func (r *reloader) reload(ctx context.Context) {
	if r.file == "" {
		r.log.Info("nothing to reload: the built-in default configuration has no file")
		return
	}
	cfg, prof, err := r.load()
	if err != nil {
		r.refuse(err)
		return
	}
	if err := r.applyAll(ctx, cfg, prof); err != nil {
		r.refuse(err)
		return
	}
	restart := restartKeys(r.started, r.startedProf, cfg, prof)
	r.mu.Lock()
	r.refused, r.restart, r.reloaded = "", restart, time.Now()
	r.mu.Unlock()
	if len(restart) > 0 {
		r.log.Warn("config edits that apply after a restart", "file", r.file, "keys", restart)
	}
}

// applyAll gives each hub its profile's upstreams in cfg (prof is the served one), once every
// profile resolved. A hub that refuses its change keeps its upstreams; the others apply theirs.
func (r *reloader) applyAll(ctx context.Context, cfg *config.Config, prof config.Profile) error {
	r.mu.Lock()
	hubs := maps.Clone(r.hubs)
	r.mu.Unlock()
	profs := map[string]config.Profile{prof.Name: prof}
	for name := range hubs {
		if _, ok := profs[name]; ok {
			continue
		}
		p, err := cfg.Profile(name)
		if err != nil {
			return err
		}
		profs[name] = p
	}
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(hubs)) {
		p := profs[name]
		change, err := hubs[name].Apply(ctx, r.resolve(ctx, cfg, p))
		switch {
		case errors.Is(err, proxy.ErrHubNotRunning): // shutting down
		case err != nil:
			errs = append(errs, startError(cfg, p, err)) // a collision names the line of the upstream that lost
		default:
			r.logDisabled(hubs[name], p.Disabled)
			hubs[name].SetDisabled(p.Disabled) // an entry an edit broke, or mended
			r.log.Info("config reloaded", "file", r.file, "profile", name,
				"added", change.Added, "removed", change.Removed, "restarted", change.Restarted)
		}
	}
	return errors.Join(errs...)
}

// logDisabled warns of each entry that an edit disabled, or disabled for another reason: the
// reload's own line counts it among the removed, and says not why.
func (r *reloader) logDisabled(h *proxy.Hub, ds []proxy.DisabledUpstream) {
	was := map[string]string{}
	for _, s := range h.Status() {
		if s.State == proxy.StateDisabled {
			was[s.Name] = s.Err
		}
	}
	for _, d := range ds {
		if d.Err != nil && was[d.Name] != d.Err.Error() {
			r.log.Warn("upstream disabled", "upstream", d.Name, "err", d.Err)
		}
	}
}

// refuse keeps the running configuration and says why, in the log (once per reason) and to status
// and the console.
func (r *reloader) refuse(err error) {
	r.mu.Lock()
	again := r.refused == err.Error()
	r.refused = err.Error()
	r.mu.Unlock()
	if !again {
		r.log.Warn("config edit refused; the running configuration stays", "file", r.file, "err", err)
	}
}

// configSnapshot is what status and the console show of reloads.
type configSnapshot struct {
	// Refused is why the file's content is not the running configuration.
	Refused string `json:"refused,omitempty"`
	// Restart are the keys edited that apply at the next start.
	Restart  []string  `json:"restart_needed,omitempty"`
	Reloaded time.Time `json:"reloaded,omitzero"`
}

// snapshot is r's state for status; nil when there is nothing to say.
func (r *reloader) snapshot() *configSnapshot {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.refused == "" && len(r.restart) == 0 && r.reloaded.IsZero() {
		return nil
	}
	return &configSnapshot{Refused: r.refused, Restart: r.restart, Reloaded: r.reloaded}
}

// restartKeys are the keys outside the profile's upstreams whose values differ between the
// configuration serve started with and a new one.
func restartKeys(was *config.Config, wasProf config.Profile, now *config.Config, nowProf config.Profile) []string {
	var keys []string
	prof := "profiles." + nowProf.Name + "."
	for _, k := range []struct {
		key      string
		was, now any
	}{
		{"default_profile", was.DefaultProfile, now.DefaultProfile},
		{"log", was.Log, now.Log},
		{"state_dir", was.StateDir, now.StateDir},
		{"state", was.State, now.State},
		{"http", was.HTTP, now.HTTP},
		{"limits", was.Limits, now.Limits},
		{"ollama", was.Ollama, now.Ollama},
		{"audit", was.Audit, now.Audit},
		{"tracing", was.Tracing, now.Tracing},
		{prof + "core_tools", wasProf.CoreTools, nowProf.CoreTools},
		{prof + "routing", wasProf.Routing, nowProf.Routing},
		{prof + "planner", wasProf.Planner, nowProf.Planner},
		{prof + "integrity", wasProf.Integrity, nowProf.Integrity},
		{prof + "approvals", wasProf.Approvals, nowProf.Approvals},
	} {
		if !reflect.DeepEqual(k.was, k.now) {
			keys = append(keys, k.key)
		}
	}
	return keys
}

// lines says c in words, for status and the console; none for nil.
func (c *configSnapshot) lines() []string {
	if c == nil {
		return nil
	}
	var out []string
	if c.Refused != "" {
		out = append(out, "config edit refused, the previous configuration runs: "+c.Refused)
	}
	if len(c.Restart) > 0 {
		out = append(out, "config edits that apply after a restart: "+strings.Join(c.Restart, ", "))
	}
	if !c.Reloaded.IsZero() && c.Refused == "" {
		out = append(out, "config reloaded at "+c.Reloaded.Local().Format("15:04:05"))
	}
	return out
}

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
