package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcp-router/mcp-router/cmd/mcp-router/internal/config"
	"github.com/mcp-router/mcp-router/internal/printable"
	"github.com/mcp-router/mcp-router/proxy"
	"github.com/mcp-router/mcp-router/proxy/integrity"
	"github.com/mcp-router/mcp-router/state"
)

func newDoctorCmd(e *env) *cobra.Command {
	var asJSON bool
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "doctor [--json]",
		Short: "Check the configuration and start every upstream, saying what fails and how to fix it",
		Long: `Check profiles.yaml, start every upstream of the profile (each within --timeout, else
as long as serve allows: its connect_timeout, 60s by default, and up to five times that while its
process is busy, as a first npx run installing) and print, per upstream: whether it started, whether it answered
initialize (and with which protocol version), how many tools it listed, whether it
asks for authorization (HTTP 401), how many tool pins wait for approval, and how
long it took; with a hint for each failure. An upstream whose entry cannot be used
(a variable that is not set) is DISABLED, with the line and the variable. It changes
no pins. The exit status is 1 when any upstream failed or is disabled, two upstreams
want one tool name, or the state (state_dir's state.db, or state.url) cannot be used:
gateways would then keep pins and lessons in memory, and serve no tool of an upstream
other than the built-in ones, since its pin cannot be checked.`,
		Example: `  mcp-router doctor
  mcp-router doctor --profile work --json
  mcp-router doctor --timeout 2m     # a first npx run downloads its package`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return e.doctor(cmd.Context(), asJSON, timeout)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON instead of a table")
	cmd.Flags().DurationVar(&timeout, "timeout", 0, "how long each upstream may take to start, answer initialize and list its tools (0: as serve allows, its connect_timeout, else limits.connect_timeout, longer while busy)")
	return cmd
}

// checkup is doctor's finding for one upstream.
type checkup struct {
	Upstream    string   `json:"upstream"`
	OK          bool     `json:"ok"`
	Disabled    bool     `json:"disabled,omitempty"` // left out for its configuration
	Started     bool     `json:"started"`
	Initialized bool     `json:"initialized"`
	Protocol    string   `json:"protocol,omitempty"`
	Tools       int      `json:"tools"`
	AuthNeeded  bool     `json:"authorization_needed"`
	PinsWaiting int      `json:"pins_waiting"`
	Blocked     int      `json:"tools_blocked"`
	Seconds     float64  `json:"seconds"`
	Starting    bool     `json:"starting,omitempty"` // still on its first attempt when doctor stopped waiting
	Error       string   `json:"error,omitempty"`
	Hint        string   `json:"hint,omitempty"`
	Stderr      []string `json:"stderr,omitempty"`
}

type doctorReport struct {
	Config  string `json:"config"`
	Profile string `json:"profile"`
	// State is where pins, lessons and the registry are kept, or why they cannot be, in which case
	// gateways keep them in memory.
	State     string    `json:"state"`
	StateOK   bool      `json:"state_ok"`
	Upstreams []checkup `json:"upstreams"`
	Problems  []string  `json:"problems,omitempty"` // name collisions
}

func (e *env) doctor(ctx context.Context, asJSON bool, timeout time.Duration) error {
	cfg, prof, err := e.loadConfig()
	if err != nil {
		return err
	}
	none := e.noStateYet(cfg)
	_, stateErr := e.cliState(ctx, cfg) // why a gateway would keep its state in memory
	pins := e.pinsWaiting(ctx, cfg, prof)
	// doctor reads pins, never writes them
	g := e.newGateway(cfg, prof, parts{readPins: true, initTimeout: timeout})
	defer g.Close()
	if err := g.Start(ctx); err != nil {
		return err
	}
	// With --timeout, each upstream gets that long; else as long as serve would give it (a busy
	// first npx install gets more than one limit).
	wait := ctx
	if timeout > 0 {
		var cancel context.CancelFunc
		wait, cancel = context.WithTimeout(ctx, timeout+time.Second)
		defer cancel()
	}
	collisions := g.hub.AwaitStarted(wait)
	rep := g.checkup(stateErr, pins)
	if none {
		rep.State = "state: none yet (serve creates " + filepath.Join(cfg.StateDir, state.FileName) + ")"
	}
	if asJSON {
		err = printJSON(e, rep)
	} else {
		err = printDoctor(e.stdout, rep)
	}
	if err != nil {
		return err
	}
	if collisions != nil {
		collisions = startError(cfg, prof, collisions)
	}
	if stateErr != nil {
		stateErr = fmt.Errorf("the state cannot be used: %s", stateProblemText(cfg, stateErr))
	}
	return errors.Join(stateErr, collisions, g.down())
}

// checkup is doctor's report of the gateway's upstreams, its state and its name collisions.
func (g *gateway) checkup(stateErr error, pins map[string]int) doctorReport {
	rep := doctorReport{Config: g.cfg.File, Profile: g.prof.Name, State: stateLocation(g.cfg), StateOK: stateErr == nil}
	if stateErr != nil {
		rep.State = stateNotice(stateProblemText(g.cfg, stateErr))
	}
	for _, s := range g.hub.Status() {
		c := examine(s, pins[s.Name])
		if u, ok := upstreamOf(g.prof, s.Name); ok && c.Started && !c.OK && !c.Starting {
			if p := missingPath(u.Args); p != "" {
				c.Hint = "its args name " + p + ", which does not exist: fix the path in the profile, or create it. Else " + c.Hint
			}
		}
		rep.Upstreams = append(rep.Upstreams, c)
	}
	for _, p := range g.hub.Catalog().Problems {
		if p.Collision {
			rep.Problems = append(rep.Problems, p.Text)
		}
	}
	return rep
}

// missingPath is the first of a server's args that is an absolute path to nothing: a folder or
// file moved or mistyped, which servers often meet by exiting; "" when there is none.
func missingPath(args []string) string {
	for _, a := range args {
		if _, err := os.Stat(a); filepath.IsAbs(a) && errors.Is(err, fs.ErrNotExist) {
			return a
		}
	}
	return ""
}

// stateLocation names where the state is kept: the state.url database (without its password) or
// state.db.
func stateLocation(cfg *config.Config) string {
	if cfg.State.URL != "" {
		return "state: ok (the database of state.url)"
	}
	return "state: ok (" + filepath.Join(cfg.StateDir, state.FileName) + ")"
}

// noStateYet has a check (doctor) read the state that exists and create none: when there is no
// state.db yet and serve could create it, it uses an empty state in memory and says so. When serve
// could not, opening it fails as serve's would, creating nothing, and doctor reports why.
func (e *env) noStateYet(cfg *config.Config) bool {
	if e.state != nil || cfg.State.URL != "" {
		return false
	}
	_, err := os.Stat(filepath.Join(cfg.StateDir, state.FileName))
	if !errors.Is(err, fs.ErrNotExist) || !canCreateIn(cfg.StateDir) {
		return false
	}
	e.state = state.NewMemory()
	return true
}

// canCreateIn says whether a file could be created in dir, made with its missing parents: a file
// made and removed in dir's nearest existing ancestor tells.
func canCreateIn(dir string) bool {
	for {
		info, err := os.Stat(dir)
		if err == nil && info.IsDir() {
			f, err := os.CreateTemp(dir, ".mcp-router-check-*")
			if err != nil {
				return false
			}
			f.Close()
			return os.Remove(f.Name()) == nil
		}
		parent := filepath.Dir(dir)
		if err == nil || !errors.Is(err, fs.ErrNotExist) || parent == dir {
			return false
		}
		dir = parent
	}
}

// pinsWaiting counts, per upstream, the pinned tools whose definition changed and waits for
// approval, or that a gateway holds back (quarantined); nil when pins are off or unreadable.
func (e *env) pinsWaiting(ctx context.Context, cfg *config.Config, prof config.Profile) map[string]int {
	if !prof.Integrity.Pins {
		return nil
	}
	st, err := e.cliState(ctx, cfg)
	if err != nil {
		return nil
	}
	store, err := integrity.OpenStore(st.Pins())
	if err != nil {
		return nil
	}
	out := map[string]int{}
	for _, p := range store.List() {
		if u, ok := upstreamOf(prof, p.Upstream); ok && (p.Pending() || p.Held != "") {
			out[u.Name]++
		}
	}
	return out
}

func examine(s proxy.Status, pins int) checkup {
	c := checkup{Upstream: s.Name, OK: s.State == proxy.StateConnected, Disabled: s.State == proxy.StateDisabled, Started: s.Started, Initialized: s.Initialized,
		Protocol: s.Protocol, Tools: s.Tools, AuthNeeded: s.AuthNeeded, PinsWaiting: pins, Blocked: s.Blocked,
		Seconds: s.FirstAttempt.Round(time.Millisecond).Seconds()}
	if s.Starting {
		c.Starting = true
		c.Seconds = time.Since(s.Since).Round(time.Millisecond).Seconds()
	}
	if c.OK {
		if pins > 0 || s.Blocked > 0 {
			c.Hint = "tool definitions changed since they were pinned: review them with `mcp-router pins list`, then `mcp-router pins approve NAME`"
		}
		return c
	}
	c.Error = why(s)
	c.Hint = hint(s)
	c.Stderr = s.Stderr
	return c
}

// hint says how to fix an upstream that did not connect.
func hint(s proxy.Status) string {
	stderr := strings.ToLower(strings.Join(s.Stderr, "\n"))
	var exit *exec.ExitError
	var unset *config.UnsetError
	switch {
	case errors.As(s.Cause, &unset):
		return fmt.Sprintf("set %s where mcp-router starts (the \"env\" of the client's mcp-router entry; `mcp-router install` writes it), or give it a fallback: ${%s:-value}. The other upstreams run without this one", unset.Name, unset.Name)
	case s.State == proxy.StateDisabled:
		return "fix this upstream's entry in the profile; the other upstreams run without it"
	case strings.Contains(s.Err, "working directory (cwd)") && !s.Started:
		return "the upstream's working directory is missing or not a directory: fix its cwd in the profile, or create the folder"
	case errors.Is(s.Cause, exec.ErrNotFound) || strings.Contains(s.Err, "no such file or directory") && !s.Started:
		return "the command was not found: check its name and your PATH, or install it (npx needs Node.js, uvx needs uv)"
	case strings.Contains(stderr, "404") && strings.Contains(stderr, "npm"),
		strings.Contains(stderr, "could not determine executable to run"):
		return "npx could not find the package: check the package name in args (and that npm can reach its registry)"
	case s.AuthNeeded:
		return "the server wants authorization: run `mcp-router auth login " + s.Name + "` (OAuth), or put a token in the upstream's headers, e.g. Authorization: \"Bearer ${TOKEN}\""
	case s.Starting:
		return "still starting when doctor stopped waiting (a first npx or uvx run installs its package first): " +
			"run doctor again with a longer --timeout, or give the upstream a longer connect_timeout"
	case strings.Contains(s.Err, "npx's install folder"):
		return "a first npx run was cut short and left its install folder half-installed: the error names the folder; " +
			"the gateway removes it once by itself, else remove it by hand"
	case errors.Is(s.Cause, proxy.ErrNoAnswer):
		return "the process runs but never answered initialize: it hangs. Run its command by hand to see what it waits for " +
			"(a prompt, a login, a first download); a first npx run downloads the package and may need longer"
	case errors.As(s.Cause, &exit) && len(s.Stderr) == 0: // npx whose package's install script failed, for one
		return fmt.Sprintf("the process exited with code %d and wrote nothing on stderr: run its command by hand to see why "+
			"(npx says why a package's install failed only in npm's log, under `npm config get cache`/_logs)", exit.ExitCode())
	case errors.As(s.Cause, &exit):
		return fmt.Sprintf("the process exited with code %d: read its last stderr lines below", exit.ExitCode())
	case strings.Contains(s.Err, "connection refused"):
		return "nothing listens at that address: is the server running, and is the url right?"
	case strings.Contains(s.Err, "likely a legacy SSE server"): // the url refused a streamable HTTP POST
		return "the url refused the streamable HTTP initialize (HTTP 4xx): an older server speaks SSE (set `transport: sse` on its entry); else check the url's path"
	case strings.Contains(s.Err, "dial tcp: lookup "): // "no such host", or no answer from the resolver
		return "the url's host name does not resolve: check it for a typo, and that this machine can reach it (network, VPN, HTTPS_PROXY)"
	default:
		return "run `mcp-router serve --log-level debug` and read this upstream's lines"
	}
}

func printDoctor(w io.Writer, rep doctorReport) error {
	fmt.Fprintf(w, "config %s, profile %s: ok\n%s\n\n", printable.Line(rep.Config), printable.Line(rep.Profile), printable.Lines(rep.State))
	tw := newTable(w, "UPSTREAM\tRESULT\tSTARTED\tINITIALIZED\tTOOLS\tAUTH\tPINS WAITING\tTIME")
	for _, c := range rep.Upstreams {
		proto, auth := "no", "-"
		if c.Initialized {
			proto = "yes " + c.Protocol
		}
		if c.AuthNeeded {
			auth = "NEEDED"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%d\t%.1fs\n", printable.Line(c.Upstream), c.result(), yesNo(c.Started), printable.Line(proto), c.Tools, auth, c.PinsWaiting, c.Seconds)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, c := range rep.Upstreams {
		c.printFix(w)
	}
	for _, p := range rep.Problems {
		fmt.Fprintf(w, "\nproblem: %s\n", printable.Line(p))
	}
	return nil
}

// result is the RESULT column: ok, DISABLED, FAILED or STARTING.
func (c checkup) result() string {
	switch {
	case c.Starting:
		return "STARTING"
	case c.Disabled:
		return "DISABLED"
	case !c.OK:
		return "FAILED"
	}
	return "ok"
}

// printFix prints what went wrong with the upstream and how to fix it, with its last stderr lines;
// nothing when all is well.
func (c checkup) printFix(w io.Writer) {
	if c.Error == "" && c.Hint == "" {
		return
	}
	fmt.Fprintf(w, "\n%s:\n", printable.Line(c.Upstream))
	if c.Error != "" {
		fmt.Fprintf(w, "  error: %s\n", printable.Line(c.Error))
	}
	fmt.Fprintf(w, "  fix:   %s\n", printable.Line(c.Hint))
	for _, l := range c.Stderr {
		fmt.Fprintf(w, "  stderr: %s\n", printable.Line(l))
	}
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
