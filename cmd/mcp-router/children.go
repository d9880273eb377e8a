package main

import (
	"os"
	"slices"
	"sync"

	"github.com/mcp-router/mcp-router/proxy"
)

// guardChildren is called before a hub starts its upstreams. main sets it
// to startChildGuard; in tests it does nothing, as a test binary must not
// start itself as a watchdog.
var guardChildren = func([]proxy.UpstreamConfig) {}

var childGuard struct {
	once sync.Once
	mu   sync.Mutex
	stop func() // the watchdog's, once started
}

// startChildGuard makes sure the processes stdio upstreams start end with
// the gateway even if it is killed (Linux): a watchdog process kills them
// all then. Without an executable to run it is not started, and a killed
// gateway leaves its children behind. Without a stdio upstream there is
// nothing to guard.
func startChildGuard(ups []proxy.UpstreamConfig) {
	if !slices.ContainsFunc(ups, func(u proxy.UpstreamConfig) bool { return u.Transport == proxy.TransportStdio }) {
		return
	}
	childGuard.once.Do(func() {
		childGuard.mu.Lock()
		defer childGuard.mu.Unlock()
		if exe, err := os.Executable(); err == nil {
			if stop, err := proxy.StartWatchdog(exe); err == nil {
				childGuard.stop = stop
			}
		}
	})
}

// stopChildGuard ends the watchdog, once the hub is closed.
func stopChildGuard() {
	childGuard.mu.Lock()
	defer childGuard.mu.Unlock()
	if childGuard.stop != nil {
		childGuard.stop()
		childGuard.stop = nil
	}
}
