package upstreamauth

import (
	"cmp"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// A login is bound to its audience, never to the upstream's local name:
//
//   - it is stored under the upstream's resource URL ([Audience]), so a
//     profile that points a name at another server, or gives another
//     server an old name, finds no login there (and a renamed entry that
//     still points at the same server keeps it: the token was issued for
//     that server);
//   - its record keeps the authorization server it was made at (Issuer,
//     TokenEndpoint), and the refresh token and client secret are sent to
//     that token endpoint only (pinTokenEndpoint): an upstream whose
//     metadata now names another authorization server gets no refresh
//     there; its calls fail auth_required until a new login.
//
// Logins stored by name before this (rows whose key is no URL) are never
// read; `auth status` says "needs login" for them until the next login.

// Audience is the key of the logins to the upstream at resourceURL: its
// scheme and host lower-cased, its path without a trailing slash, and no
// userinfo, query or fragment (which may hold secrets, and are not where
// the server is).
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

// pinTokenEndpoint is client sending POSTs (token requests: refresh,
// registration) only to endpoint; GETs (discovery) go anywhere.
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
