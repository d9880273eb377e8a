package bridge

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/mcp-router/mcp-router/internal/sameorigin"
)

// The token and headers connect sends belong to the URL it was given:
// the client follows a redirect only within that URL's origin (Go's
// client would send --header values, and a request body, to any host a
// gateway or something posing as one redirects to), and no text the
// bridge writes (errors to the client, logs) holds the URL's userinfo or
// query, or a header's value.

// ErrCrossOrigin refuses a redirect to another origin than the gateway's.
var ErrCrossOrigin = errors.New("redirect to another origin refused (connect sends its token and headers to the URL given only; give the URL it redirects to)")

// maxRedirects bounds the redirects followed within the gateway's origin.
const maxRedirects = 5

// sameOrigin is the CheckRedirect of the bridge's client.
var sameOrigin = sameorigin.Redirects(maxRedirects, func(_, to *url.URL) error {
	return fmt.Errorf("%w: to %s://%s", ErrCrossOrigin, to.Scheme, to.Host)
})

// shownURL is raw without userinfo, query and fragment.
func shownURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(the gateway URL)"
	}
	u.User, u.RawQuery, u.Fragment = nil, "", ""
	return u.String()
}

// withoutSecrets is err's text without the request's URL (Go's client
// names it, query included) and header values.
func (b *Bridge) withoutSecrets(err error) error {
	msg := err.Error()
	var ue *url.Error
	if errors.As(err, &ue) {
		msg = strings.ReplaceAll(msg, ue.URL, b.shown)
	}
	if clean := b.redact(msg); clean != err.Error() {
		return &cleanError{msg: clean, err: err}
	}
	return err
}

// redact replaces in t every header value the bridge sends (and a bearer
// token alone), so that a gateway that quotes them is not repeated.
func (b *Bridge) redact(t string) string {
	for _, vs := range b.opts.Header {
		for _, v := range vs {
			if _, tok, ok := strings.Cut(v, " "); ok && len(tok) >= 6 {
				t = strings.ReplaceAll(t, tok, "[redacted]")
			}
			if len(v) >= 6 {
				t = strings.ReplaceAll(t, v, "[redacted]")
			}
		}
	}
	return t
}

type cleanError struct {
	msg string
	err error
}

func (e *cleanError) Error() string { return e.msg }
func (e *cleanError) Unwrap() error { return e.err }
