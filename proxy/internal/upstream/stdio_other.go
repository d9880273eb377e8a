//go:build !windows

package upstream

import "syscall"

// ChildSysProcAttr puts the child in its own process group, so that a
// terminal's interrupt meant for the gateway does not reach it first.
func ChildSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
