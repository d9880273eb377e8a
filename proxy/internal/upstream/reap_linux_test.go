package upstream

import (
	"bytes"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// pid1Var, set in the environment, runs TestReapAsInitReapsOrphans as
// PID 1 of the PID namespace it was started in.
const pid1Var = "MCP_ROUTER_TEST_AS_PID1"

// As PID 1 (in a container), the gateway reaps the orphans re-parented to
// it: a stdio child that leaves a process behind and exits does not leave
// a zombie once that process ends. Run in a PID namespace of its own, when
// unshare may make one.
func TestReapAsInitReapsOrphans(t *testing.T) {
	if os.Getenv(pid1Var) == "" {
		if exec.Command("unshare", "--pid", "--fork", "--mount-proc", "true").Run() != nil {
			t.Skip("cannot make a PID namespace here (unshare)")
		}
		cmd := exec.Command("unshare", "--pid", "--fork", "--mount-proc", os.Args[0], "-test.run=^TestReapAsInitReapsOrphans$", "-test.v")
		cmd.Env = append(os.Environ(), pid1Var+"=1")
		if out, err := cmd.CombinedOutput(); err != nil || !bytes.Contains(out, []byte("--- PASS")) {
			t.Fatalf("as PID 1: %v\n%s", err, out)
		}
		return
	}
	if os.Getpid() != 1 {
		t.Fatalf("pid %d in the new namespace, want 1", os.Getpid())
	}
	stop, err := StartWatchdog("no watchdog as PID 1")
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	cmd := exec.Command("sh", "-c", `sleep 0.2 & echo $!`) // exits at once, leaving sleep behind
	var out bytes.Buffer
	cmd.Stdout = &out
	if err := startTracked(cmd); err != nil {
		t.Fatal(err)
	}
	if err := waitTracked(cmd); err != nil {
		t.Fatal(err)
	}
	orphan, err := strconv.Atoi(strings.TrimSpace(out.String()))
	if err != nil {
		t.Fatalf("the orphan's pid: %q", out.String())
	}
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	never := time.NewTimer(10 * time.Second) // a bound on a hang, not on speed
	defer never.Stop()
	for {
		if _, err := os.Stat("/proc/" + strconv.Itoa(orphan)); os.IsNotExist(err) {
			return // ended and reaped
		}
		select {
		case <-tick.C:
		case <-never.C:
			stat, _ := os.ReadFile("/proc/" + strconv.Itoa(orphan) + "/stat")
			t.Fatalf("the orphan %d is still in /proc after 10s: %s", orphan, stat)
		}
	}
}
