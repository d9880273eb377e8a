package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/mcp-router/mcp-router/internal/fakeupstream"
)

func TestMain(m *testing.M) {
	fakeupstream.MaybeRun()
	runFloorIfAsked()
	// Keep pins and caches of the tests out of the user's state directory.
	state, err := os.MkdirTemp("", "mcp-router-state")
	if err != nil {
		panic(err)
	}
	os.Setenv("XDG_STATE_HOME", state)
	code := m.Run()
	os.RemoveAll(state)
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			os.Stderr.WriteString("goleak: " + err.Error() + "\n")
			code = 1
		}
	}
	os.Exit(code)
}

var (
	binOnce sync.Once
	binDir  string
	binPath string
	binErr  error
)

// buildBinary builds mcp-router once per test run, for tests that run it
// as a real process the way an MCP client does.
func buildBinary(tb testing.TB) string {
	tb.Helper()
	binOnce.Do(func() {
		binDir, binErr = os.MkdirTemp("", "mcp-router-bin")
		if binErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "mcp-router")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			binErr = &buildError{out: string(out), err: err}
		}
	})
	if binErr != nil {
		tb.Fatalf("building mcp-router: %v", binErr)
	}
	return binPath
}

type buildError struct {
	out string
	err error
}

func (e *buildError) Error() string { return e.err.Error() + "\n" + e.out }
