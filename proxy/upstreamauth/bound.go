package upstreamauth

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/mcp-router/mcp-router/internal/bodylimit"
	"github.com/mcp-router/mcp-router/internal/sameorigin"
)

// Bounds of what the gateway reads from an authorization server.
const (
	// MaxReplyBytes bounds one reply's body.
	MaxReplyBytes = 1 << 20
	// DefaultTimeout bounds one request, its reply's body included.
	DefaultTimeout = 30 * time.Second
	// maxAuthRedirects bounds the redirects followed within an origin.
	maxAuthRedirects = 5
)

// errCrossOrigin refuses a redirect to another origin.
var errCrossOrigin = errors.New("redirect to another origin refused")

// boundClient is c (nil: a new client) with its replies bounded (mcp-go
// reads them without a bound), a timeout, and redirects followed only
// within the origin: Go's client resends a token request's body, with its
// secrets, on a 307 or 308 to any host.
func boundClient(c *http.Client) *http.Client {
	out := &http.Client{}
	if c != nil {
		*out = *c
	}
	if out.Timeout <= 0 {
		out.Timeout = DefaultTimeout
	}
	out.Transport = &bodylimit.Transport{Next: out.Transport, Max: MaxReplyBytes}
	out.CheckRedirect = sameOrigin
	return out
}

// sameOrigin is the CheckRedirect of boundClient.
var sameOrigin = sameorigin.Redirects(maxAuthRedirects, func(from, to *url.URL) error {
	return fmt.Errorf("%w: %s://%s redirected to %s://%s", errCrossOrigin, from.Scheme, from.Host, to.Scheme, to.Host)
})
