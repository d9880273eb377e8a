package upstream

import (
	"errors"
	"fmt"
	"net/url"

	"github.com/mcp-router/mcp-router/internal/sameorigin"
)

// ErrCrossOriginRedirect is returned when an HTTP upstream redirects a
// request to another origin.
var ErrCrossOriginRedirect = errors.New("redirect to another origin refused")

// maxRedirects bounds the redirects followed within the upstream's origin.
const maxRedirects = 10

// sameOriginRedirects is the CheckRedirect of every HTTP upstream client:
// the configured headers and credentials never reach another origin. The
// error names the target origin, never its path or query.
var sameOriginRedirects = sameorigin.Redirects(maxRedirects, func(_, to *url.URL) error {
	return fmt.Errorf("%w: the upstream redirected to %s://%s; configure the URL it redirects to",
		ErrCrossOriginRedirect, to.Scheme, to.Host)
})
