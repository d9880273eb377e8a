package upstream

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// How the processes a stdio upstream starts are ended on Linux: one
// mechanism, the tag. Every stdio child gets ChildTagVar=<tag> in its
// environment, a tag unique to the child (this gateway's process id and
// start time, and a sequence number). Its descendants inherit it whatever
// they do with process groups and sessions (npx, sh -c, a daemon that
// calls setsid), so stopping the child signals every process carrying its
// tag (found in /proc/<pid>/environ), and once the child has ended every
// process still carrying it is killed. If the gateway itself is killed
// (SIGKILL, which no code in it can answer), the watchdog that
// StartWatchdog runs in a session of its own kills every process carrying
// one of this gateway's tags.
//
// When the gateway is PID 1 of a PID namespace (the container image runs
// it so), the kernel kills every process of the namespace as it dies, so
// there is no watchdog; orphans are re-parented to the gateway then, and
// it reaps them as init must (reapAsInit).
//
// What the tag does not catch: a descendant that clears or rewrites its
// environment before exec'ing (env -i), one that becomes another user
// (its environ cannot be read), and, if the gateway is killed, anything
// when the watchdog was not started (a library user, a test binary) or
// was killed with it. Process groups, Pdeathsig (which fires when the
// thread that started the child ends, not the process) and a subreaper
// were measured beside it: each catches a subset of what it does (none
// catches a grandchild that called setsid once the gateway is killed).

// watchdogVar, set in the environment, makes MaybeRunWatchdog act as the
// watchdog of the gateway whose tag prefix it holds.
const watchdogVar = "MCP_ROUTER_WATCHDOG"

// gatewayTag prefixes the tags of this gateway's children.
var gatewayTag = strconv.Itoa(os.Getpid()) + "." + strconv.FormatInt(time.Now().UnixNano(), 36)

var childSeq atomic.Int64

// newChildTag is a tag for one stdio child.
func newChildTag() string {
	return gatewayTag + "." + strconv.FormatInt(childSeq.Add(1), 10)
}

// tagEnv returns env without any ChildTagVar entry, plus tag's.
func tagEnv(env []string, tag string) []string {
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if !strings.HasPrefix(kv, ChildTagVar+"=") {
			out = append(out, kv)
		}
	}
	return append(out, ChildTagVar+"="+tag)
}

// tracked holds the process ids of the processes this package started,
// which exec.Cmd.Wait reaps: reapAsInit leaves them to it. Starting one
// and reaping orphans both hold it, so a child that ends at once is never
// reaped by the wrong one.
var tracked = struct {
	sync.Mutex
	pids map[int]bool
}{pids: map[int]bool{}}

// startTracked starts cmd and records its process id.
func startTracked(cmd *exec.Cmd) error {
	tracked.Lock()
	defer tracked.Unlock()
	if err := cmd.Start(); err != nil {
		return err
	}
	tracked.pids[cmd.Process.Pid] = true
	return nil
}

// waitTracked waits for cmd, started by startTracked, and forgets it.
func waitTracked(cmd *exec.Cmd) error {
	err := cmd.Wait()
	tracked.Lock()
	delete(tracked.pids, cmd.Process.Pid)
	tracked.Unlock()
	return err
}

// reapAsInit reaps, on each SIGCHLD, the ended children of this process
// that it did not start (orphans re-parented to it as PID 1), until stop.
func reapAsInit() (stop func()) {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGCHLD)
	done, quit := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-quit:
				return
			case <-sigs:
				reapOrphans()
			}
		}
	}()
	return func() {
		signal.Stop(sigs)
		close(quit)
		<-done
	}
}

// reapOrphans waits, without blocking, for each process of /proc that is
// an ended child this package did not start; for any other process
// wait4 fails at once.
func reapOrphans() {
	entries, _ := os.ReadDir("/proc")
	tracked.Lock()
	defer tracked.Unlock()
	for _, e := range entries {
		if pid, err := strconv.Atoi(e.Name()); err == nil && !tracked.pids[pid] {
			var ws unix.WaitStatus
			_, _ = unix.Wait4(pid, &ws, unix.WNOHANG, nil)
		}
	}
}

// signalTree sends sig to the child (even one that cleared its
// environment) and every process carrying its tag; SIGKILL is sent in
// rounds until none is left.
func (c *child) signalTree(sig syscall.Signal) {
	if c.cmd.Process != nil {
		_ = c.cmd.Process.Signal(sig)
	}
	signalTagged(func(t string) bool { return t == c.tag }, sig)
}

// maxSweeps bounds the rounds of signalTagged: a process may fork while
// the previous round kills its parent.
const maxSweeps = 8

// signalTagged sends sig to every process whose environment holds a tag
// that match accepts; SIGKILL in rounds until none is left.
func signalTagged(match func(tag string) bool, sig syscall.Signal) {
	for range maxSweeps {
		pids := taggedProcesses(match)
		for _, pid := range pids {
			_ = unix.Kill(pid, sig)
		}
		if len(pids) == 0 || sig != syscall.SIGKILL {
			return
		}
	}
}

// taggedProcesses lists the live processes (not zombies: their environ
// reads empty) whose environment holds a tag that match accepts.
// Processes of other users cannot be read and are skipped.
func taggedProcesses(match func(string) bool) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	self := os.Getpid()
	var out []int
	prefix := []byte(ChildTagVar + "=")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil || !bytes.Contains(env, prefix) {
			continue
		}
		for _, kv := range bytes.Split(env, []byte{0}) {
			if tag, ok := bytes.CutPrefix(kv, prefix); ok && match(string(tag)) {
				out = append(out, pid)
				break
			}
		}
	}
	return out
}

// StartWatchdog starts the watchdog that kills this gateway's stdio
// children and their descendants if the gateway is killed (SIGKILL): the
// executable at exe (the gateway's own, whose main calls
// MaybeRunWatchdog first), in a session of its own. stop, at a normal
// shutdown after the hub is closed, ends it. As PID 1 it starts the
// orphan reaper instead (see the top of this file).
func StartWatchdog(exe string) (stop func(), err error) {
	if os.Getpid() == 1 {
		return reapAsInit(), nil
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe)
	cmd.Env = append(childEnv(os.Environ(), nil, false), watchdogVar+"="+gatewayTag)
	cmd.Stdin = pr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := startTracked(cmd); err != nil {
		closeAll(pr, pw)
		return nil, fmt.Errorf("starting the watchdog: %w", err)
	}
	pr.Close()
	exited := make(chan struct{})
	go func() {
		_ = waitTracked(cmd)
		close(exited)
	}()
	return func() {
		pw.Close()
		if !within(exited, 5*time.Second) {
			_ = cmd.Process.Kill()
			<-exited
		}
	}, nil
}

// MaybeRunWatchdog runs the watchdog and exits when this process was
// started as one (by StartWatchdog); otherwise it returns at once. Call
// it first in main.
func MaybeRunWatchdog() {
	prefix := os.Getenv(watchdogVar)
	if prefix == "" {
		return
	}
	signal.Ignore(syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	_, _ = io.Copy(io.Discard, os.Stdin) // until the gateway is gone
	signalTagged(func(tag string) bool { return strings.HasPrefix(tag, prefix+".") }, syscall.SIGKILL)
	os.Exit(0)
}
