package upstream

import "net/http"

// upstreamTransport carries every HTTP upstream's requests: the default
// transport but keeping more idle connections per host (the default two
// would make each further call in flight open and close its own).
var upstreamTransport = newUpstreamTransport()

// upstreamIdlePerHost bounds the idle connections kept for one host (not
// the calls).
const upstreamIdlePerHost = 256

func newUpstreamTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = 0 // no bound across hosts; each host has its own
	t.MaxIdleConnsPerHost = upstreamIdlePerHost
	return t
}
