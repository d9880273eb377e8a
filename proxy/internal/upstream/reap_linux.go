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
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// How the processes a stdio upstream starts are found and ended on Linux.
//
// Every stdio child gets ChildTagVar=<tag> in its environment, a tag
// unique to the child (this gateway's process id and start time, and a
// sequence number). Its descendants inherit it, whatever they do with
// process groups and sessions (npx, sh -c, a daemon that calls setsid),
// so when the child ends, killTagged finds every process still carrying
// its tag in /proc/<pid>/environ and kills it. A process that rewrites
// its environment before exec'ing escapes the tag; the process group and,
// under AdoptOrphans, the subreaper catch most of those.
//
// AdoptOrphans makes the gateway a child subreaper: a descendant whose
// parent ends is re-parented to the gateway instead of init, so it stays
// in the gateway's tree, and is reaped by the gateway when it ends.
//
// StartWatchdog covers SIGKILL of the gateway, which no code in it can
// answer: a small process (the gateway's own binary, run by
// MaybeRunWatchdog) in a session of its own waits for the gateway to go
// (its stdin, a pipe from the gateway, reaches EOF) and then kills every
// process carrying one of this gateway's tags. Pdeathsig on each child
// kills the child itself at once.

// watchdogVar, set in the environment, makes MaybeRunWatchdog act as the
// watchdog of the gateway whose tag prefix it holds.
const watchdogVar = "MCP_ROUTER_WATCHDOG"

// gatewayTag prefixes the tags of this gateway's children.
var gatewayTag = strconv.Itoa(os.Getpid()) + "." + strconv.FormatInt(time.Now().UnixNano(), 36)

var childSeq struct {
	sync.Mutex
	n int
}

// newChildTag is a tag for one stdio child.
func newChildTag() string {
	childSeq.Lock()
	defer childSeq.Unlock()
	childSeq.n++
	return gatewayTag + "." + strconv.Itoa(childSeq.n)
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

// tracked holds the process ids of the children this process started
// and waits for with exec.Cmd.Wait: the orphan reaper must leave them to
// it. Starting a child and reaping orphans both hold it, so a child that
// ends at once is never reaped by the wrong one.
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

// untrack forgets pid once exec.Cmd.Wait has reaped it.
func untrack(pid int) {
	tracked.Lock()
	delete(tracked.pids, pid)
	tracked.Unlock()
}

// maxSweeps bounds the rounds of killTagged: a process may fork while
// the previous round kills its parent.
const maxSweeps = 8

// killTagged kills every process whose environment holds a tag that
// match accepts, in rounds until none is left, and reaps those that are
// this process's children (adopted orphans). It returns how many it
// killed.
func killTagged(match func(tag string) bool) int {
	killed := 0
	for range maxSweeps {
		pids := taggedProcesses(match)
		if len(pids) == 0 {
			break
		}
		for _, pid := range pids {
			if unix.Kill(pid, unix.SIGKILL) == nil {
				killed++
			}
		}
		for _, pid := range pids {
			reapAdopted(pid)
		}
	}
	return killed
}

// taggedProcesses lists the live processes (not zombies) whose
// environment holds a tag that match accepts. Processes of other users
// cannot be read and are skipped: a child cannot become another user
// without privileges the gateway does not grant.
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

// reapAdopted waits for pid if it is an adopted orphan of this process
// (a child not started by exec.Cmd); it has been sent SIGKILL.
func reapAdopted(pid int) {
	tracked.Lock()
	adopted := !tracked.pids[pid] && parentOf(pid) == os.Getpid()
	tracked.Unlock()
	if adopted {
		var ws unix.WaitStatus
		_, _ = unix.Wait4(pid, &ws, 0, nil)
	}
}

// parentOf is pid's parent process id, or 0.
func parentOf(pid int) int {
	ppid, _ := ProcStat(pid)
	return ppid
}

// ProcStat reads pid's parent and state from /proc/<pid>/stat.
func ProcStat(pid int) (ppid int, state byte) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0
	}
	i := bytes.LastIndexByte(b, ')') // the command name may hold anything
	if i < 0 || i+2 >= len(b) {
		return 0, 0
	}
	fields := strings.Fields(string(b[i+2:]))
	if len(fields) < 2 {
		return 0, 0
	}
	ppid, _ = strconv.Atoi(fields[1])
	return ppid, fields[0][0]
}

// killChildTree kills what a stdio child left behind once it has ended:
// every process carrying its tag.
func killChildTree(tag string) int {
	return killTagged(func(t string) bool { return t == tag })
}

// AdoptOrphans makes this process a child subreaper, so the processes
// that stdio upstreams start and abandon stay its descendants (and are
// found and killed with them), and reaps those orphans as they end, on
// each SIGCHLD. The gateway calls it once at start; stop ends the reaper.
// Library users that start processes of their own with os/exec need not
// call it: the orphan reaper waits only for processes it did not start
// through this package, and those would include theirs.
func AdoptOrphans() (stop func(), err error) {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return func() {}, fmt.Errorf("becoming a child subreaper: %w", err)
	}
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
	}, nil
}

// reapOrphans waits for every ended child of this process that it did
// not start through exec.Cmd: orphans adopted as subreaper.
func reapOrphans() {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return
	}
	self := os.Getpid()
	tracked.Lock()
	defer tracked.Unlock()
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || tracked.pids[pid] {
			continue
		}
		if ppid, state := ProcStat(pid); ppid == self && state == 'Z' {
			var ws unix.WaitStatus
			_, _ = unix.Wait4(pid, &ws, unix.WNOHANG, nil)
		}
	}
}

// StartWatchdog starts the watchdog that kills this gateway's stdio
// children and their descendants if the gateway is killed (SIGKILL): the
// executable at exe (the gateway's own, whose main calls
// MaybeRunWatchdog first), in a session of its own. stop, at a normal
// shutdown after the hub is closed, ends it.
func StartWatchdog(exe string) (stop func(), err error) {
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe)
	cmd.Env = append(childEnv(os.Environ(), nil), watchdogVar+"="+gatewayTag)
	cmd.Stdin = pr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := startTracked(cmd); err != nil {
		closeAll(pr, pw)
		return nil, fmt.Errorf("starting the watchdog: %w", err)
	}
	pr.Close()
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		untrack(cmd.Process.Pid)
		close(exited)
	}()
	return func() {
		pw.Close()
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
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
	killTagged(func(tag string) bool { return strings.HasPrefix(tag, prefix+".") })
	os.Exit(0)
}
