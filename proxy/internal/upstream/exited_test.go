package upstream

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// A stdio child that exits mid-call fails the call with an error that
// says so, with how it ended (its exit code, or the signal that killed
// it) and the stderr line that best says why, rather than "transport
// closed"; the error is still a transport error (the client sees
// upstream_unavailable), on both protocol eras.
func TestCallToAChildThatExitsSaysHowItEnded(t *testing.T) {
	for _, tc := range []struct {
		name, protocol, stderr string
		kill                   bool
		want                   []string
		not                    string // a text the error must not hold
	}{
		{name: "exit code and the error line", stderr: "Error: None of the specified directories are accessible",
			want: []string{"the process exited with code 3", "(stderr: Error: None of the specified directories are accessible)"}},
		{name: "the error line, not the warning before it", stderr: warnThenError,
			want: []string{"the process exited with code 3", "(stderr: Error: None of the specified directories are accessible)"}},
		{name: "exit code, nothing on stderr", want: []string{"the process exited with code 3"}},
		{name: "a last line that names no error is not quoted", stderr: "index closed",
			want: []string{"the process exited with code 3"}, not: "index closed"},
		{name: "the stateless era", protocol: "modern", stderr: "fatal: the index is locked",
			want: []string{"the process exited with code 3", "(stderr: fatal: the index is locked)"}},
		{name: "killed by a signal", kill: true, want: []string{"the process was killed by signal 9 (killed)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := stdioFake("solo")
			cfg.Protocol = tc.protocol
			u, progress := runSolo(t, cfg)
			if s := u.Status(); s.State != StateConnected {
				t.Fatalf("the fake did not connect: %s", s.Err)
			}
			var err error
			if tc.kill {
				err = killMidCall(t, u, progress)
			} else {
				_, err = callErr(t, u, "crash", map[string]any{"stderr": tc.stderr}, nil)
			}
			if err == nil {
				t.Fatal("the call succeeded, want it failed")
			}
			if !IsTransportError(err) {
				t.Errorf("error %q is not a transport error", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if tc.not != "" && strings.Contains(err.Error(), tc.not) {
				t.Errorf("error %q quotes %q", err, tc.not)
			}
			if strings.Contains(err.Error(), "transport closed") {
				t.Errorf("error %q says transport closed, want how the process ended", err)
			}
		})
	}
}

// warnThenError is what the filesystem server prints when given a folder
// that does not exist.
const warnThenError = "Warning: Cannot access directory /no-such-dir, skipping\n" +
	"Error: None of the specified directories are accessible"

// A child that exits at start: the reason status and doctor give quotes
// the error, not the warning before it; with no error, the last line (a
// usage line, say).
func TestFailedStartQuotesTheErrorNotTheWarning(t *testing.T) {
	for _, tc := range []struct{ name, stderr, want string }{
		{"a warning, then an error", warnThenError,
			"the process exited with code 1 (stderr: Error: None of the specified directories are accessible)"},
		{"no error: the last line", "files server 1.0\nUsage: files-server DIR...",
			"the process exited with code 1 (stderr: Usage: files-server DIR...)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Config{Name: "files", Transport: TransportStdio, Command: "sh",
				Args: []string{"-c", `printf '%s\n' "$0" >&2; exit 1`, tc.stderr}}
			u, _ := runSolo(t, cfg)
			if s := u.Status(); !strings.Contains(s.Err, tc.want) {
				t.Errorf("status error %q does not say %q", s.Err, tc.want)
			}
		})
	}
}

// A start that cannot fix itself (no such command, npm's E404 for a
// misspelt package) waits lastingRetry, not the backoff, says so in its
// error, and tries again at once on Retry (what reload calls).
func TestAStartThatCannotFixItselfWaitsForARetry(t *testing.T) {
	control, _ := runSolo(t, Config{Name: "flaky", Transport: TransportStdio, Command: "sh", Args: []string{"-c", "exit 1"}})
	var lasting []*Upstream
	for _, cfg := range []Config{
		{Command: "mcp-router-test-no-such-command"},
		{Command: filepath.Join(t.TempDir(), "gone")},
		{Command: "sh", Args: []string{"-c", "echo 'npm error code E404' >&2; echo 'npm error 404 Not Found - GET /@x%2fmisspelt' >&2; exit 1"}},
	} {
		cfg.Name, cfg.Transport = "lasting", TransportStdio
		u, _ := runSolo(t, cfg)
		lasting = append(lasting, u)
	}
	waitFor(t, func() bool { return control.Status().Restarts >= 3 }, "the control upstream to restart 3 times")
	for _, u := range lasting {
		if s := u.Status(); s.Restarts != 0 || !strings.Contains(s.Err, "cannot fix itself, next retry in 5m0s or at once on `mcp-router reload`") {
			t.Errorf("%s: %d restarts while the control made 3, error %q", u.cfg.Command, s.Restarts, s.Err)
		}
		u.Retry()
		waitFor(t, func() bool { return u.Status().Restarts == 1 }, "a retry at once")
	}
}

// waitFor waits until cond holds, at most 30 s (a guard against a hang).
func waitFor(t *testing.T, cond func() bool, what string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited 30 s for %s", what)
		}
	}
}

// killMidCall kills u's child while a call hangs in it and returns the
// call's error.
func killMidCall(t *testing.T, u *Upstream, progress *ProgressRouter) error {
	pid, err := strconv.Atoi(allText(callSolo(t, u, "pid", nil, nil)))
	if err != nil {
		t.Fatal(err)
	}
	arrived := make(chan struct{}, 1)
	token, release := progress.Register("solo", func(Progress) {
		select {
		case arrived <- struct{}{}:
		default:
		}
	})
	defer release()
	failed := make(chan error, 1)
	go func() {
		_, err := callErr(t, u, "hang", nil, token)
		failed <- err
	}()
	select {
	case <-arrived:
	case <-time.After(30 * time.Second): // a guard against a hang, not a measure of speed
		t.Fatal("the hang call never arrived")
	}
	p, err := os.FindProcess(pid)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Kill(); err != nil {
		t.Fatal(err)
	}
	return <-failed
}

// runSolo runs the upstream cfg with no hub until the test ends, once
// its first attempt has ended.
func runSolo(t *testing.T, cfg Config) (*Upstream, *ProgressRouter) {
	progress := &ProgressRouter{}
	u := runOn(t, cfg, soloEnv(progress))
	select {
	case <-u.First():
	case <-time.After(30 * time.Second): // a guard against a hang, not a measure of speed
		t.Fatal("the first attempt never ended")
	}
	return u, progress
}

// callErr calls tool on u as the hub does and returns its error.
func callErr(t *testing.T, u *Upstream, tool string, args map[string]any, token mcp.ProgressToken) (*mcp.CallToolResult, error) {
	req := mcp.CallToolRequest{}
	req.Params.Name, req.Params.Arguments = tool, args
	if token != nil {
		req.Params.Meta = &mcp.Meta{ProgressToken: token}
	}
	ctx, done := u.calls.add(t.Context())
	defer done()
	return u.CallTool(ctx, req)
}

// soloEnv is an Env for an upstream with no hub: a short backoff, no
// vetting, nothing logged.
func soloEnv(progress *ProgressRouter) Env {
	return Env{
		Logger: slog.New(slog.DiscardHandler), Version: "test",
		InitTimeout: 5 * time.Second, BackoffMin: 20 * time.Millisecond, BackoffMax: 200 * time.Millisecond,
		RefreshDebounce: 20 * time.Millisecond, ReconnectWait: time.Second, MaxInFlight: 4, MaxQueue: 4,
		Progress: progress,
		Vet: func(_ Config, _, _ *slog.Logger, tools []mcp.Tool) ([]mcp.Tool, map[string]string) {
			return tools, nil
		},
		Listed: func(*Upstream, bool) {},
	}
}

// runOn runs an upstream of cfg on env until the test ends.
func runOn(t *testing.T, cfg Config, env Env) *Upstream {
	u := New(cfg, env)
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	wg.Go(func() { u.Run(ctx) })
	t.Cleanup(func() {
		cancel()
		wg.Wait()
	})
	return u
}
