package proxy

import "syscall"

// childSysProcAttr puts the child in its own process group and asks the
// kernel to kill it if the proxy dies (even by SIGKILL).
func childSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
