// Package sameorigin is the redirect policy of HTTP clients that carry
// credentials (configured headers, tokens, a request body): a redirect is
// followed only within the origin (scheme, host and port) of the request
// that began the chain. Go's client drops Authorization and Cookie on a
// cross-host redirect, but not an X-API-Key or any other header it was
// given, and 307 and 308 send the body again.
package sameorigin

import (
	"fmt"
	"net/http"
	"net/url"
)

// Redirects returns a CheckRedirect that follows at most max redirects,
// each within the first request's origin; a redirect elsewhere fails with
// refused(from, to), whose text should name origins only, never a path or
// query.
func Redirects(max int, refused func(from, to *url.URL) error) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		if len(via) >= max {
			return fmt.Errorf("stopped after %d redirects", max)
		}
		if from := via[0].URL; from.Scheme != req.URL.Scheme || from.Host != req.URL.Host {
			return refused(from, req.URL)
		}
		return nil
	}
}
