package frontdoor

import (
	"cmp"
	"net/http"
	"time"
)

// HTTPServerOptions are the connection timeouts of the HTTP server that
// serve --http runs. Zero values take the defaults in brackets.
type HTTPServerOptions struct {
	// HeaderTimeout bounds the reading of a request's headers
	// [DefaultHeaderTimeout]; a client that sends them slower is cut off.
	HeaderTimeout time.Duration
	// IdleTimeout closes a keep-alive connection with no request for this
	// long [DefaultIdleTimeout].
	IdleTimeout time.Duration
}

// Defaults of HTTPServerOptions.
const (
	DefaultHeaderTimeout = 10 * time.Second
	DefaultIdleTimeout   = 2 * time.Minute
)

// NewHTTPServer returns the server for h with opts' timeouts; none bounds
// a whole request (streams live as long as their calls; Guard bounds bodies).
func NewHTTPServer(h http.Handler, opts HTTPServerOptions) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: cmp.Or(max(opts.HeaderTimeout, 0), DefaultHeaderTimeout),
		IdleTimeout:       cmp.Or(max(opts.IdleTimeout, 0), DefaultIdleTimeout),
		MaxHeaderBytes:    64 << 10,
	}
}
