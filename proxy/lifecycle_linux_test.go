package proxy

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/mcp-router/mcp-router/internal/fakeupstream"
)

// procAlive says whether pid is a process that has not ended (a zombie
// has), by its state in /proc/<pid>/stat (after the command name, which
// may hold anything).
func procAlive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	i := bytes.LastIndexByte(b, ')')
	return err == nil && i > 0 && i+2 < len(b) && b[i+2] != 'Z'
}

// TestLifecycleStdioGrandchildrenGoneAfterClose: a process that a stdio
// upstream starts in a session of its own (setsid: out of the child's
// process group) is killed when the child is, at Close and when the
// child crashes, through the tag in its environment.
func TestLifecycleStdioGrandchildrenGoneAfterClose(t *testing.T) {
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("no setsid command")
	}
	exe, env := fakeupstream.Command("parent")
	for _, end := range []string{"close", "crash"} {
		t.Run(end, func(t *testing.T) {
			pidFile := filepath.Join(t.TempDir(), "pid")
			up := UpstreamConfig{Name: "parent", Transport: TransportStdio, Command: "sh", Prefix: "parent_",
				Args: []string{"-c", `setsid sh -c 'echo $$ > "$PIDFILE"; exec sleep 300' & exec "$FAKE"`},
				Env:  map[string]string{"PIDFILE": pidFile, "FAKE": exe, fakeupstream.EnvVar: env[fakeupstream.EnvVar]}}
			h := startHub(t, up)
			var pid int
			eventually(t, 5*time.Second, "the grandchild's pid", func() bool {
				b, _ := os.ReadFile(pidFile)
				n, err := strconv.Atoi(strings.TrimSpace(string(b)))
				pid = n
				return err == nil && strings.HasSuffix(string(b), "\n")
			})
			t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
			if !procAlive(pid) {
				t.Fatalf("the grandchild %d is not running", pid)
			}
			if sid, _ := unix.Getsid(pid); sid != pid {
				t.Fatalf("the grandchild %d is not in a session of its own (sid %d)", pid, sid)
			}
			if end == "close" {
				h.Close()
			} else {
				_, _ = h.CallTool(t.Context(), "parent_crash", nil, nil)
			}
			eventually(t, 5*time.Second, "the grandchild to be gone", func() bool { return !procAlive(pid) })
		})
	}
}
