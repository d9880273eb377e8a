//go:build !windows

package upstream

import "syscall"

// ChildSysProcAttr puts the child in its own process group, so that a
// terminal's interrupt meant for the gateway does not reach it first (the
// gateway cancels its calls, then stops it). Outside Linux the group is
// also what signalTree signals.
func ChildSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
