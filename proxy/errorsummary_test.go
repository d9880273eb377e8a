package proxy

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/server"

	"github.com/mcp-router/mcp-router/internal/fakeupstream"
)

// TestShortUpstreamFailure: an upstream's HTTP error page (8 MiB, many
// lines, quoting its API key) reaches the model as one short line, cut
// once at MaxErrorSummaryBytes with its length; the log gets the whole
// text up to the error-body limit; the key is in neither.
func TestShortUpstreamFailure(t *testing.T) {
	const key = "sk-live-0123456789abcdefghij"
	mcpHandler := server.NewStreamableHTTPServer(fakeupstream.New("remote"))
	t.Cleanup(func() { mcpHandler.Shutdown(context.Background()) })
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, text, ok := postedCall(w, r); !ok {
			return
		} else if text == "fail" {
			w.WriteHeader(http.StatusInternalServerError)
			io.WriteString(w, "<html>\n<h1>Internal error</h1>\nkey "+r.Header.Get("X-Api-Key")+" refused\n")
			io.WriteString(w, strings.Repeat("at frame.go:12\n\t", 8<<20/16))
			return
		}
		mcpHandler.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	var log syncBuffer
	h := startHubWith(t, Options{Builtin: fakeBuiltins, Logger: slog.New(slog.NewTextHandler(&log, nil)),
		Upstreams: []UpstreamConfig{{Name: "remote", Transport: TransportStreamableHTTP, URL: ts.URL + "/mcp", Prefix: "remote_",
			Headers: map[string]string{"X-Api-Key": key}}}})
	_, err := h.CallTool(t.Context(), "remote_echo", map[string]any{"text": "fail"}, nil)
	if err == nil {
		t.Fatal("a call answered by an HTTP 500 succeeded")
	}
	msg := err.Error()
	if n := len(msg); n > MaxErrorSummaryBytes+256 {
		t.Errorf("the model's error is %d bytes, want at most about %d", n, MaxErrorSummaryBytes)
	}
	if strings.ContainsAny(msg, "\n\r\t") || strings.Count(msg, "bytes in all") != 1 || !strings.Contains(msg, "Internal error") {
		t.Errorf("the model's error: got %q, want one line with the page's start and one note of its length", msg)
	}
	logged := log.String()
	if !strings.Contains(logged, "upstream error text cut") || strings.Count(logged, "frame.go") < 1000 {
		t.Errorf("the log does not hold the whole text (%d bytes logged)", len(logged))
	}
	if strings.Contains(msg, key) || strings.Contains(logged, key) {
		t.Error("the upstream's key reached the model's error or the log")
	}
}

// TestSummarizeErrorKeepsItsBound: the summary before the note is at most
// MaxErrorSummaryBytes, even when a space falls just past the bound, and
// it is one line of valid UTF-8.
func TestSummarizeErrorKeepsItsBound(t *testing.T) {
	for _, msg := range []string{
		strings.Repeat("x", MaxErrorSummaryBytes) + " tail",
		strings.Repeat("x", MaxErrorSummaryBytes-1) + "\n\t tail",
		strings.Repeat("é", MaxErrorSummaryBytes) + "\xff",
	} {
		got, cut := summarizeError(msg)
		head, _, _ := strings.Cut(got, "… (")
		if !cut || len(head) > MaxErrorSummaryBytes || strings.ContainsAny(got, "\n\t") || !utf8.ValidString(got) {
			t.Errorf("summarizeError(%d bytes): cut %v, %d bytes before the note, want cut and at most %d of one valid line",
				len(msg), cut, len(head), MaxErrorSummaryBytes)
		}
	}
}
