//go:build !linux && !windows

package proxy

import "syscall"

// childSysProcAttr puts the child in its own process group.
func childSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
