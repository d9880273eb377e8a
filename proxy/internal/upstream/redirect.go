package upstream

import (
	"errors"
	"fmt"
	"net/http"
)

// ErrCrossOriginRedirect is returned when an HTTP upstream redirects a
// request to another origin.
var ErrCrossOriginRedirect = errors.New("redirect to another origin refused")

// maxRedirects bounds the redirects followed within the upstream's origin.
const maxRedirects = 10

// sameOriginRedirects is the CheckRedirect of every HTTP upstream client.
// A redirect is followed only within the origin (scheme, host and port)
// of the request that started the chain, so the configured headers, the
// URL's credentials and a request body (which 307 and 308 send again)
// never reach a server the configuration did not name. Go's client would
// drop Authorization and Cookie on a cross-host redirect, but not an
// X-API-Key or any other configured header, and it would resend the body.
// The error names the target origin, never its path or query.
func sameOriginRedirects(req *http.Request, via []*http.Request) error {
	if len(via) >= maxRedirects {
		return fmt.Errorf("stopped after %d redirects", maxRedirects)
	}
	from, to := via[0].URL, req.URL
	if from.Scheme != to.Scheme || from.Host != to.Host {
		return fmt.Errorf("%w: the upstream redirected to %s://%s; configure the URL it redirects to",
			ErrCrossOriginRedirect, to.Scheme, to.Host)
	}
	return nil
}
