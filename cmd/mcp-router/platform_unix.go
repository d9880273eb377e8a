//go:build unix

package main

import (
	"errors"
	"os"
	"os/signal"
	"syscall"
)

// notifyReload delivers SIGHUP, the signal `mcp-router reload` sends, on the channel until stop.
func notifyReload() (sig <-chan os.Signal, stop func()) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGHUP)
	return ch, func() { signal.Stop(ch) }
}

// askReload asks the gateway process pid to reload its configuration.
func askReload(pid int) error { return syscall.Kill(pid, syscall.SIGHUP) }

// processAlive reports whether a process with pid exists (signal 0 checks without sending anything;
// EPERM means it exists under another user).
func processAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
