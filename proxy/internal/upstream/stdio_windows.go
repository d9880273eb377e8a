package upstream

import "syscall"

// ChildSysProcAttr starts the child in a new process group, so that a
// console interrupt meant for the gateway does not reach it first.
func ChildSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP}
}

// signalTree kills the child: Windows has no signals to send.
func (c *child) signalTree(syscall.Signal) {
	if c.cmd.Process != nil {
		_ = c.cmd.Process.Kill()
	}
}
