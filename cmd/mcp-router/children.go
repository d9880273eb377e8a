package main

import (
	"os"
	"slices"
	"sync"

	"github.com/mcp-router/mcp-router/proxy"
)

// guardChildren is called before a hub starts its upstreams. main sets it
// to startChildGuard; in tests it does nothing, as a test binary must not
// become a subreaper or start itself as a watchdog.
var guardChildren = func([]proxy.UpstreamConfig) {}

var childGuard struct {
	once sync.Once
	mu   sync.Mutex
	stop []func()
}

// startChildGuard makes sure the processes stdio upstreams start end with
// the gateway (Linux): the gateway becomes a child subreaper, so orphaned
// descendants stay in its tree and are reaped, and a watchdog process
// kills them all if the gateway itself is killed. Either may be refused
// (an old kernel, no executable to run); the process group and Pdeathsig
// remain the guard then. Without a stdio upstream there is nothing to
// guard.
func startChildGuard(ups []proxy.UpstreamConfig) {
	if !slices.ContainsFunc(ups, func(u proxy.UpstreamConfig) bool { return u.Transport == proxy.TransportStdio }) {
		return
	}
	childGuard.once.Do(func() {
		childGuard.mu.Lock()
		defer childGuard.mu.Unlock()
		if stop, err := proxy.AdoptOrphans(); err == nil {
			childGuard.stop = append(childGuard.stop, stop)
		}
		if exe, err := os.Executable(); err == nil {
			if stop, err := proxy.StartWatchdog(exe); err == nil {
				childGuard.stop = append(childGuard.stop, stop)
			}
		}
	})
}

// stopChildGuard ends the watchdog and the reaper, once the hub is closed.
func stopChildGuard() {
	childGuard.mu.Lock()
	defer childGuard.mu.Unlock()
	for i := len(childGuard.stop) - 1; i >= 0; i-- {
		childGuard.stop[i]()
	}
	childGuard.stop = nil
}
