package upstream

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"time"
)

// passEnv lists the variables a stdio child inherits; the rest of the
// gateway's environment (tokens, keys) stays out.
var passEnv = []string{
	"PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "TZ", "TMPDIR", "TERM",
	"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy",
	"SYSTEMROOT", "APPDATA", "LOCALAPPDATA", "USERPROFILE",
}

// passEnvPrefixes are prefixes of variables a child inherits, among them
// the package managers' settings (npx and uvx behind a mirror).
var passEnvPrefixes = []string{"LC_", "XDG_", "npm_config_", "NPM_CONFIG_", "NODE_", "UV_", "PIP_"}

// childEnv builds a stdio child's environment: the inherited allowlist
// from environ (all of it with inheritAll), then the upstream's own env
// (which wins).
func childEnv(environ []string, extra map[string]string, inheritAll bool) []string {
	env := make([]string, 0, len(extra)+16)
	for _, kv := range environ {
		k, _, ok := strings.Cut(kv, "=")
		if ok && (inheritAll || Inheritable(k)) {
			if _, override := extra[k]; !override {
				env = append(env, kv)
			}
		}
	}
	for k, v := range extra {
		env = append(env, k+"="+v)
	}
	return env
}

// Inheritable reports whether a stdio child inherits the variable key from
// the gateway's environment.
func Inheritable(key string) bool {
	return slices.Contains(passEnv, key) || slices.ContainsFunc(passEnvPrefixes, func(p string) bool { return strings.HasPrefix(key, p) })
}

// ChildTagVar names the environment variable that tags a stdio child and
// its descendants, so they can be ended with it (Linux; see reap_linux.go).
const ChildTagVar = "MCP_ROUTER_CHILD"

// child is a stdio upstream process; its descendants end with it.
type child struct {
	cmd    *exec.Cmd
	tag    string   // in the environment of the child and its descendants (Linux)
	stdin  *os.File // our write end of the child's stdin
	stdout *os.File // our read end of the child's stdout
	done   chan struct{}
	err    error // set before done closes
}

// Shutdown grace periods: close stdin, then SIGTERM, then SIGKILL.
const (
	stdinGrace = 2 * time.Second
	termGrace  = 2 * time.Second
)

// startChild starts cfg's command with pipes we own; its stderr goes to
// stderr and tail, never to our stdout.
func startChild(cfg Config, stderr *stderrLog, tail *lineTail) (*child, error) {
	if err := checkCwd(cfg.Cwd); err != nil {
		return nil, fmt.Errorf("starting %s: %w", cfg.Command, err)
	}
	cmd := exec.Command(cfg.Command, cfg.Args...)
	cmd.Dir = cfg.Cwd
	tag := newChildTag()
	cmd.Env = tagEnv(childEnv(os.Environ(), cfg.Env, cfg.InheritEnv), tag)
	cmd.SysProcAttr = ChildSysProcAttr()
	var p [6]*os.File // stdin's read and write ends, stdout's, stderr's
	for i := 0; i < len(p); i += 2 {
		var err error
		if p[i], p[i+1], err = os.Pipe(); err != nil {
			closeAll(p[:i]...)
			return nil, err
		}
	}
	inR, inW, outR, outW, errR, errW := p[0], p[1], p[2], p[3], p[4], p[5]
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	if err := startTracked(cmd); err != nil {
		closeAll(p[:]...)
		return nil, fmt.Errorf("starting %s: %w", cfg.Command, err)
	}
	closeAll(inR, outW, errW) // the child holds its ends now
	c := &child{cmd: cmd, tag: tag, stdin: inW, stdout: outR, done: make(chan struct{})}
	go stderr.copy(errR, tail)
	go c.wait()
	return c, nil
}

// checkCwd says what is wrong with a child's working directory: exec
// reports a missing one as the command not found.
func checkCwd(dir string) error {
	if dir == "" {
		return nil
	}
	fi, err := os.Stat(dir)
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("working directory (cwd) %s: %w", dir, pe.Err)
	}
	if err == nil && !fi.IsDir() {
		return fmt.Errorf("working directory (cwd) %s is not a directory", dir)
	}
	return err
}

func closeAll(files ...*os.File) {
	for _, f := range files {
		f.Close()
	}
}

// wait reaps the child, then closes our end of its stdout, so a reader
// sees EOF even while a grandchild holds the write end.
func (c *child) wait() {
	c.err = waitTracked(c.cmd)
	c.signalTree(syscall.SIGKILL) // leave no descendants behind
	c.stdout.Close()
	close(c.done)
}

// stop shuts the child down as the MCP spec asks: close its stdin, wait,
// SIGTERM its tree, wait, SIGKILL it; it returns once the child is reaped.
func (c *child) stop() {
	c.stdin.Close()
	if within(c.done, stdinGrace) {
		return
	}
	c.signalTree(syscall.SIGTERM)
	if within(c.done, termGrace) {
		return
	}
	c.signalTree(syscall.SIGKILL)
	<-c.done
}

// exitError is a stdio child that ended: how (from waiting for it), and
// the stderr line that best says why. It loses the connection: see
// IsTransportError.
type exitError struct {
	err    error  // nil for a clean exit; else an *exec.ExitError, or why waiting failed
	stderr string // "" for none
}

func (e *exitError) Error() string {
	var exit *exec.ExitError
	msg := "the process exited with code 0"
	switch {
	case errors.As(e.err, &exit):
		msg = fmt.Sprintf("the process exited with code %d", exit.ExitCode())
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			msg = fmt.Sprintf("the process was killed by signal %d (%v)", int(ws.Signal()), ws.Signal())
		}
	case e.err != nil:
		msg = "the process ended: " + e.err.Error()
	}
	if e.stderr != "" {
		msg += " (stderr: " + e.stderr + ")"
	}
	return msg
}

func (e *exitError) Unwrap() error { return e.err }

// maxLogLine cuts a long line of a child's stderr (see stderrLog.copy).
const maxLogLine = 4096
