package upstream

import "net/http"

// upstreamTransport carries every HTTP upstream's requests. It is
// http.DefaultTransport but for the idle connections it keeps per host:
// the default keeps two, so with more calls in flight on one upstream
// each further call would open a connection and close it after its
// reply. Keeping as many as can be busy at once lets them be reused;
// they are no more than the calls one upstream may have in flight
// (Options.MaxInFlight) plus its event stream, and close after the
// transport's idle timeout.
var upstreamTransport = newUpstreamTransport()

// upstreamIdlePerHost bounds the idle connections kept for one host. It is
// not a bound on calls: a call past it still gets a connection, which
// closes after its reply.
const upstreamIdlePerHost = 256

func newUpstreamTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = 0 // no bound across hosts; each host has its own
	t.MaxIdleConnsPerHost = upstreamIdlePerHost
	return t
}
