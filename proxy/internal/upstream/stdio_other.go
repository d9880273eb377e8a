//go:build !linux && !windows

package upstream

import "syscall"

// ChildSysProcAttr puts the child in its own process group.
func ChildSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
