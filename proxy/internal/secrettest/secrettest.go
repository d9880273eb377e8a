// Package secrettest holds the configured secrets that the scrubbing
// tests of proxy and its upstreams give their upstreams, and the check
// that none of them, in any form it could be sent in, shows anywhere.
package secrettest

import (
	"encoding/base64"
	"net/url"
	"strings"
	"testing"
)

// The configured secrets of the upstreams in these tests. None has the
// shape of a known kind of key, so only the configured-secret screen can
// catch them.
const (
	Header = "hdr-Secret-4f9a2c7e"
	Query  = "qry/Secret+81d3"
	User   = "pw-Secret-77ab"
	Env    = "env-Secret-0c5e1b"
)

// Forms are the forms of the secrets that must not appear anywhere: as
// written, query-escaped, and in standard and URL-safe base64.
func Forms(secrets ...string) []string {
	var out []string
	for _, s := range secrets {
		out = append(out, s, url.QueryEscape(s), base64.StdEncoding.EncodeToString([]byte(s)),
			base64.RawURLEncoding.EncodeToString([]byte(s)))
	}
	return out
}

// AssertNoLeak fails t for every form of secrets that text carries;
// where says what text is.
func AssertNoLeak(t testing.TB, where, text string, secrets ...string) {
	t.Helper()
	for _, f := range Forms(secrets...) {
		if strings.Contains(text, f) {
			t.Errorf("%s carries the secret %q: %s", where, f, text)
		}
	}
}
