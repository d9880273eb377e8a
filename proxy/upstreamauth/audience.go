package upstreamauth

import (
	"cmp"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/mcp-router/mcp-router/internal/bodylimit"
	"github.com/mcp-router/mcp-router/internal/sameorigin"
)

// Audience is the key of the logins to the upstream at resourceURL, never
// its local name, so a name pointed at another server finds no login: its
// scheme and host lower-cased, its path without a trailing slash, and no
// userinfo, query or fragment.
func Audience(resourceURL string) (string, error) {
	u, err := url.Parse(resourceURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("logins are kept by the upstream's URL: %q is not an http(s) URL", redactURL(resourceURL))
	}
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Host) + strings.TrimSuffix(u.EscapedPath(), "/"), nil
}

// redactURL is raw without userinfo and query, for an error's text.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable)"
	}
	return endpointOf(u)
}

// pinTokenEndpoint is client sending POSTs (refresh, registration) only
// to endpoint, where the login was made; GETs (discovery) go anywhere.
func pinTokenEndpoint(client *http.Client, endpoint string) *http.Client {
	c := *client
	c.Transport = pinned{endpoint: endpoint, next: cmp.Or[http.RoundTripper](client.Transport, http.DefaultTransport)}
	return &c
}

type pinned struct {
	endpoint string
	next     http.RoundTripper
}

func (p pinned) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead && (p.endpoint == "" || endpointOf(r.URL) != p.endpoint) {
		if r.Body != nil {
			r.Body.Close()
		}
		// A login's refresh token or client secret goes to the server it was made at, only.
		return nil, fmt.Errorf("the upstream now names another authorization server than the one it was logged in at: "+
			"log in again (asked to send it to %s://%s)", r.URL.Scheme, r.URL.Host)
	}
	return p.next.RoundTrip(r)
}

// endpointOf is u without userinfo, query and fragment.
func endpointOf(u *url.URL) string {
	c := *u
	c.User, c.RawQuery, c.Fragment = nil, "", ""
	return c.String()
}

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
