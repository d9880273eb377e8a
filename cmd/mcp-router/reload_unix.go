//go:build unix

package main

import (
	"os"
	"os/signal"
	"syscall"
)

// notifyReload delivers SIGHUP, the signal `mcp-router reload` sends, on
// the channel until stop.
func notifyReload() (sig <-chan os.Signal, stop func()) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGHUP)
	return ch, func() { signal.Stop(ch) }
}

// askReload asks the gateway process pid to reload its configuration.
func askReload(pid int) error { return syscall.Kill(pid, syscall.SIGHUP) }
