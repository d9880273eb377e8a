package proxy

import "github.com/mcp-router/mcp-router/proxy/frontdoor"

// The front door's bounds and log hygiene, which the checks of each
// client message share.

// defaultMaxBodyBytes bounds one client message, over HTTP and stdio.
const defaultMaxBodyBytes = frontdoor.DefaultMaxBodyBytes

// logSafe makes a client-chosen value safe for a log line.
func logSafe(s string) string { return frontdoor.LogSafe(s) }
