package upstream

import (
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"

	"github.com/mcp-router/mcp-router/internal/sameorigin"
	"github.com/mcp-router/mcp-router/proxy/internal/wire"
)

// DefaultMaxErrorBodyBytes bounds the body of an HTTP error reply from an
// upstream (status 300 or more).
const DefaultMaxErrorBodyBytes = 64 << 10

// boundedBodies bounds every response body of an HTTP upstream, since
// mcp-go reads error replies, event-stream lines and SSE replies whole:
// an event stream's lines and events, any other 2xx reply, each to the
// message limit; an error reply to the error-body limit. Past a limit the
// read fails with wire.ErrMessageTooLarge.
type boundedBodies struct {
	next     http.RoundTripper
	max      int         // bytes in one reply, one event-stream line or one event
	maxError int         // bytes in the body of an error reply
	report   func(error) // logs and counts one reply refused; must not block
}

func (b *boundedBodies) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := b.next.RoundTrip(req)
	if err != nil || resp.Body == nil {
		return resp, err
	}
	if wire.Guarded(resp.Body) { // checked and bounded by wire.ReplyGuard
		return resp, nil
	}
	media, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch {
	case resp.StatusCode >= 300:
		resp.Body = &sizeBound{body: resp.Body, max: b.maxError, report: b.report,
			what: fmt.Sprintf("an HTTP %d reply", resp.StatusCode)}
	case media == "text/event-stream":
		resp.Body = &eventBound{body: resp.Body, max: b.max, report: b.report}
	default:
		resp.Body = &sizeBound{body: resp.Body, max: b.max, report: b.report, what: "a reply"}
	}
	return resp, nil
}

// sizeBound fails a body past max bytes.
type sizeBound struct {
	body   io.ReadCloser
	max    int
	n      int
	what   string
	report func(error)
	err    error
}

func (s *sizeBound) Read(p []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	if room := s.max + 1 - s.n; len(p) > room {
		p = p[:room]
	}
	n, err := s.body.Read(p)
	if s.n += n; s.n > s.max {
		s.err = fmt.Errorf("%w: %s over %d bytes", wire.ErrMessageTooLarge, s.what, s.max)
		s.report(s.err)
		return n - (s.n - s.max), s.err
	}
	return n, err
}

func (s *sizeBound) Close() error { return s.body.Close() }

// eventBound fails an event stream with a line or an event over max bytes.
type eventBound struct {
	body        io.ReadCloser
	max         int
	line, event int // bytes in the line and the event being read
	report      func(error)
	err         error
}

func (e *eventBound) Read(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.body.Read(p)
	for i, c := range p[:n] {
		switch c {
		case '\n':
			if e.line == 0 { // a blank line ends the event
				e.event = 0
			}
			e.line = 0
			continue
		case '\r':
			continue
		}
		e.line++
		e.event++
		if e.line > e.max || e.event > e.max {
			what := "an event"
			if e.line > e.max {
				what = "a line"
			}
			e.err = fmt.Errorf("%w: %s of an event stream over %d bytes", wire.ErrMessageTooLarge, what, e.max)
			e.report(e.err)
			return i, e.err
		}
	}
	return n, err
}

func (e *eventBound) Close() error { return e.body.Close() }

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

// upstreamTransport carries every HTTP upstream's requests: the default
// transport but keeping more idle connections per host (the default two
// would make each further call in flight open and close its own).
var upstreamTransport = newUpstreamTransport()

// upstreamIdlePerHost bounds the idle connections kept for one host (not
// the calls).
const upstreamIdlePerHost = 256

func newUpstreamTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = 0 // no bound across hosts; each host has its own
	t.MaxIdleConnsPerHost = upstreamIdlePerHost
	return t
}
