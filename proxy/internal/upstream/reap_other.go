//go:build !linux

package upstream

import "os/exec"

// Outside Linux there is no /proc to find a child's descendants by their
// environment, and no subreaper: the process group (or, on Windows, the
// job of the platform's own) is the guard, as before.

func newChildTag() string                    { return "" }
func tagEnv(env []string, _ string) []string { return env }
func startTracked(cmd *exec.Cmd) error       { return cmd.Start() }
func untrack(int)                            {}
func killChildTree(string) int               { return 0 }

// AdoptOrphans does nothing outside Linux.
func AdoptOrphans() (stop func(), err error) { return func() {}, nil }

// StartWatchdog does nothing outside Linux.
func StartWatchdog(string) (stop func(), err error) { return func() {}, nil }

// MaybeRunWatchdog does nothing outside Linux.
func MaybeRunWatchdog() {}

// treeWork measures nothing outside Linux: a child's stderr is its only
// sign of life there.
func treeWork(string) uint64 { return 0 }
