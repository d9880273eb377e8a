// Package loopback says whether a host name stays on this machine: the
// listeners that serve loopback only (the console, metrics, the login
// callback), the Host and Origin checks of the HTTP front door, and the
// configuration's rule that http is allowed only on loopback use it.
package loopback

import "net"

// Host reports whether host (no port, no brackets) is localhost or a
// loopback IP (127.0.0.0/8, ::1). 0.0.0.0 and :: are not loopback, and
// neither is "LOCALHOST": callers lower-case a name that may be
// capitalised.
func Host(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
