package proxy

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// A request cancelled before the MCP server answered (the gateway shutting
// down) gets 503 with Retry-After and a JSON-RPC error, not an empty 200;
// one that was answered, or not cancelled, is left as it is.
func TestCancelledRequestIsAnswered503(t *testing.T) {
	silent := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
	answered := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusAccepted) })
	cancelled, cancel := context.WithCancel(t.Context())
	cancel()
	for name, tc := range map[string]struct {
		h      http.Handler
		ctx    context.Context
		status int
	}{
		"cancelled, unanswered": {silent, cancelled, http.StatusServiceUnavailable},
		"cancelled, answered":   {answered, cancelled, http.StatusAccepted},
		"live, unanswered":      {silent, t.Context(), http.StatusOK},
	} {
		rec := httptest.NewRecorder()
		answerCancelled{tc.h}.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/mcp", nil).WithContext(tc.ctx))
		if rec.Code != tc.status {
			t.Errorf("%s: status %d, want %d", name, rec.Code, tc.status)
		}
		if tc.status == http.StatusServiceUnavailable && (rec.Header().Get("Retry-After") == "" || !strings.Contains(rec.Body.String(), `"jsonrpc":"2.0"`)) {
			t.Errorf("%s: headers %v body %q, want Retry-After and a JSON-RPC error", name, rec.Header(), rec.Body)
		}
	}
}
