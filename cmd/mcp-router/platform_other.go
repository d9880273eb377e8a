//go:build !unix

package main

import "os"

// notifyReload delivers nothing: there is no SIGHUP here. Gateways still
// apply edits of their profile file within a second by themselves.
func notifyReload() (sig <-chan os.Signal, stop func()) { return nil, func() {} }

// askReload cannot reach another process here.
func askReload(int) error { return errReloadUnsupported }

// processAlive cannot check here: the heartbeat alone tells a live gateway.
func processAlive(int) bool { return true }
