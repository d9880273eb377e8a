package upstream

import "syscall"

// ChildSysProcAttr puts the child in its own process group and asks the
// kernel to kill it if the proxy dies (even by SIGKILL).
func ChildSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
