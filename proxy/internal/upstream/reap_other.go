//go:build !linux

package upstream

import "os/exec"

// Outside Linux signalTree reaches the process group (on Windows, the
// child alone): not a descendant that leaves it, nor anything once the
// gateway is killed.

func newChildTag() string                    { return "" }
func tagEnv(env []string, _ string) []string { return env }
func startTracked(cmd *exec.Cmd) error       { return cmd.Start() }
func waitTracked(cmd *exec.Cmd) error        { return cmd.Wait() }

// StartWatchdog does nothing outside Linux.
func StartWatchdog(string) (stop func(), err error) { return func() {}, nil }

// MaybeRunWatchdog does nothing outside Linux.
func MaybeRunWatchdog() {}

// treeWork measures nothing outside Linux.
func treeWork(string) uint64 { return 0 }
