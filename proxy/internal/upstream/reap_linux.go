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

// How a stdio upstream's processes are ended on Linux: one mechanism, the
// tag. Every stdio child gets ChildTagVar=<tag> (unique to the child) in
// its environment, which its descendants inherit whatever they do with
// process groups and sessions (npx, sh -c, setsid). Stopping the child
// signals every process carrying its tag (/proc/<pid>/environ), and once
// it has ended every such process left is killed. If the gateway itself
// is killed, the watchdog (StartWatchdog, in a session of its own) kills
// every process carrying one of its tags. As PID 1 of a namespace the
// kernel does that, so there is no watchdog; the gateway reaps the
// orphans re-parented to it instead (reapAsInit).
//
// What the tag does not catch: a descendant that clears its environment
// before exec'ing (env -i) or becomes another user, and, once the gateway
// is killed, anything when the watchdog was not started or died with it.
// Process groups, Pdeathsig and a subreaper each catch a subset of it.

// watchdogVar makes MaybeRunWatchdog act as the watchdog of the gateway
// whose tag prefix it holds.
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

// tracked holds the process ids this package started, which exec.Cmd.Wait
// reaps and reapAsInit leaves alone; starting one and reaping orphans both
// hold it, so a child that ends at once is never reaped by the wrong one.
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

// reapOrphans reaps, without blocking, each ended child this package did
// not start (wait4 fails at once for any other process).
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
// environment) and every process carrying its tag.
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

// taggedProcesses lists the live processes (a zombie's environ reads
// empty) whose environment holds a tag that match accepts.
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

// StartWatchdog starts exe (the gateway's own executable, whose main calls
// MaybeRunWatchdog first) as the watchdog that kills this gateway's stdio
// children and their descendants if the gateway is killed. stop ends it.
// As PID 1 it starts the orphan reaper instead.
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
// started as one; otherwise it returns at once. Call it first in main.
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

// treeWork measures the work done so far by the processes that carry tag:
// their CPU time and bytes read and written. A change says the tree is
// doing something.
func treeWork(tag string) uint64 {
	var sum uint64
	for _, pid := range taggedProcesses(func(t string) bool { return t == tag }) {
		sum += procCPU(pid) + procIO(pid)
	}
	return sum
}

// procCPU is pid's utime, stime, cutime and cstime from /proc/<pid>/stat,
// in clock ticks.
func procCPU(pid int) uint64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	i := bytes.LastIndexByte(b, ')') // the command name may hold anything
	if i < 0 {
		return 0
	}
	fields := bytes.Fields(b[i+1:])
	var sum uint64
	for _, f := range fields[min(11, len(fields)):min(15, len(fields))] { // fields 14 to 17 of stat(5)
		n, _ := strconv.ParseUint(string(f), 10, 64)
		sum += n
	}
	return sum
}

// procIO is the bytes pid read and wrote (rchar, wchar) from
// /proc/<pid>/io; 0 where it cannot be read.
func procIO(pid int) uint64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/io")
	if err != nil {
		return 0
	}
	var sum uint64
	for _, line := range bytes.Split(b, []byte{'\n'}) {
		if bytes.HasPrefix(line, []byte("rchar: ")) || bytes.HasPrefix(line, []byte("wchar: ")) {
			n, _ := strconv.ParseUint(string(line[len("rchar: "):]), 10, 64)
			sum += n
		}
	}
	return sum
}
