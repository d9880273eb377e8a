package proxy

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// CancelCalls (the gateway shutting down) cancels a call in flight
// upstream and still answers its POST with the call's result, with a
// disconnect grace period or without one, and ends the session's event
// stream.
func TestCancelCallsAnswersCallsAndEndsStreams(t *testing.T) {
	for name, grace := range map[string]time.Duration{"grace": time.Hour, "no grace": -1} {
		t.Run(name, func(t *testing.T) {
			h, srv, c := graceServer(t, grace)
			resp := startHang(t.Context(), t, c, "7")
			defer resp.Body.Close()
			stream, err := c.do(t.Context(), http.MethodGet, "")
			if err != nil {
				t.Fatal(err)
			}
			defer stream.Body.Close()
			srv.CancelCalls()
			if body := readWithin(t, resp.Body); !strings.Contains(body, `"id":7,"result":`) || !strings.Contains(body, "cancelled") {
				t.Errorf("the call's POST ended with %q, want its result saying it was cancelled", body)
			}
			readWithin(t, stream.Body) // the event stream ends
			eventually(t, faultWait, "the upstream call cancelled", func() bool {
				return cancellations(t, h, "alpha_cancellations") == 1
			})
		})
	}
}

// readWithin reads r to its end, failing the test unless it ends within
// faultWait.
func readWithin(t *testing.T, r io.Reader) string {
	t.Helper()
	done := make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(r)
		done <- string(b)
	}()
	select {
	case s := <-done:
		return s
	case <-time.After(faultWait):
		t.Fatalf("still open after %s", faultWait)
		return ""
	}
}
