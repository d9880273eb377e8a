package upstreamauth

import (
	"cmp"
	"fmt"
	"net/http"
	"net/url"
	"strings"
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
	u.User, u.RawQuery, u.Fragment = nil, "", ""
	return u.String()
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

// endpointOf is u without userinfo, query and fragment, for comparing
// token endpoints.
func endpointOf(u *url.URL) string {
	c := *u
	c.User, c.RawQuery, c.Fragment = nil, "", ""
	return c.String()
}
