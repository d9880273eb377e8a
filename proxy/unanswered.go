package proxy

import (
	"net/http"
	"sync/atomic"

	"github.com/mcp-router/mcp-router/proxy/frontdoor"
)

// answerCancelled answers 503 (with Retry-After) a request whose context
// ended before the MCP server wrote anything: at shutdown the gateway
// cancels the requests in flight, and mcp-go then returns without a
// response, which the HTTP server would send as an empty 200 that a
// client cannot read (the Go SDK's client ends its session on one). A
// 503 tells the client, or a load balancer in front of several replicas,
// to try again, elsewhere. When the client itself went away, nobody reads
// it.
type answerCancelled struct{ next http.Handler }

func (h answerCancelled) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ww := &wroteWatcher{ResponseWriter: w}
	h.next.ServeHTTP(ww, r)
	if !ww.wrote.Load() && r.Context().Err() != nil {
		w.Header().Set("Retry-After", "1")
		frontdoor.WriteRefusal(w, http.StatusServiceUnavailable, "the gateway is shutting down: retry the request")
	}
}

// wroteWatcher notes whether a response was started.
type wroteWatcher struct {
	http.ResponseWriter
	wrote atomic.Bool
}

func (w *wroteWatcher) WriteHeader(status int) {
	w.wrote.Store(true)
	w.ResponseWriter.WriteHeader(status)
}

func (w *wroteWatcher) Write(b []byte) (int, error) {
	w.wrote.Store(true)
	return w.ResponseWriter.Write(b)
}

// Flush keeps event streams streaming.
func (w *wroteWatcher) Flush() {
	w.wrote.Store(true)
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection.
func (w *wroteWatcher) Unwrap() http.ResponseWriter { return w.ResponseWriter }
