//go:build !linux

package upstream

import "os/exec"

// Outside Linux there is no /proc to find a child's descendants by their
// environment: the process group (on Windows, the child alone) is what
// signalTree reaches (killgroup_*.go). It does not catch a descendant that
// leaves the group (setsid), nor anything once the gateway is killed.

func newChildTag() string                    { return "" }
func tagEnv(env []string, _ string) []string { return env }
func startTracked(cmd *exec.Cmd) error       { return cmd.Start() }
func waitTracked(cmd *exec.Cmd) error        { return cmd.Wait() }

// StartWatchdog does nothing outside Linux.
func StartWatchdog(string) (stop func(), err error) { return func() {}, nil }

// MaybeRunWatchdog does nothing outside Linux.
func MaybeRunWatchdog() {}

// treeWork measures nothing outside Linux: a child's stderr is its only
// sign of life there.
func treeWork(string) uint64 { return 0 }
