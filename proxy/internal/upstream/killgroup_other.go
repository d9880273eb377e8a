//go:build !windows && !linux

package upstream

import "syscall"

// signalTree sends sig to the child's process group.
func (c *child) signalTree(sig syscall.Signal) {
	if c.cmd.Process == nil {
		return
	}
	// A negative pid signals the whole process group.
	if err := syscall.Kill(-c.cmd.Process.Pid, sig); err != nil {
		_ = c.cmd.Process.Signal(sig)
	}
}
