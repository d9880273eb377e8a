package upstream

import (
	"os"
	"os/exec"
	"testing"
	"time"
)

// treeWork moves for a process tree that works (a shell spinning, as an
// install unpacking) and stays put for one that waits (a server blocked
// on its stdin), looked at over the same stretch of time.
func TestTreeWorkTellsBusyFromIdle(t *testing.T) {
	busyTag, idleTag := newChildTag(), newChildTag()
	startTagged(t, busyTag, "while :; do :; done")
	startTagged(t, idleTag, "exec cat") // blocks reading its stdin once started
	// Over each stretch in which the spinning shell's work moves, the
	// waiting one's must stay put, once it has started (a few stretches).
	for range 20 {
		before := treeWork(idleTag)
		waitForWork(t, busyTag)
		if treeWork(idleTag) == before {
			return
		}
	}
	t.Error("a process waiting on its stdin: its work moved over every stretch in which the spinning shell worked")
}

// waitForWork waits until the work of the processes tagged tag moves.
func waitForWork(t *testing.T, tag string) {
	t.Helper()
	before := treeWork(tag)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	never := time.NewTimer(30 * time.Second) // a bound on a hang, not on speed
	defer never.Stop()
	for treeWork(tag) == before {
		select {
		case <-tick.C:
		case <-never.C:
			t.Fatal("the spinning shell's work never moved in 30s")
		}
	}
}

// startTagged starts sh -c script with tag in its environment; it is
// killed when the test ends.
func startTagged(t *testing.T, tag, script string) {
	t.Helper()
	cmd := exec.Command("sh", "-c", script)
	cmd.Env = tagEnv(os.Environ(), tag)
	if _, err := cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
}
