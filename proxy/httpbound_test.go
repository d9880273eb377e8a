package proxy

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/server"

	"github.com/mcp-router/mcp-router/executor"
	"github.com/mcp-router/mcp-router/internal/fakeupstream"
	"github.com/mcp-router/mcp-router/proxy/internal/upstream"
)

// TestBoundUpstreamHTTPStreams: an upstream that sends one endless line
// on the GET stream of streamable HTTP is cut off near the message limit:
// the gateway stops reading, its memory does not follow the stream, and
// the calls go on. (The legacy SSE stream: TestBoundUpstreamSSEStream in
// internal/upstream.)
func TestBoundUpstreamHTTPStreams(t *testing.T) {
	const max = 64 << 10
	// What the kernel's socket buffers hold on both ends once the client
	// stops reading: far below what an unbounded reader would take.
	const slack = 16 << 20
	t.Run("streamable HTTP GET stream", func(t *testing.T) {
		var written atomic.Int64
		var gets atomic.Int32
		done := make(chan struct{})
		mcpHandler := server.NewStreamableHTTPServer(fakeupstream.New("remote"))
		t.Cleanup(func() { mcpHandler.Shutdown(context.Background()) })
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodGet && gets.Add(1) == 1 {
				defer close(done)
				fakeupstream.Endless(w, "text/event-stream", "data: ", &written)
				return
			}
			mcpHandler.ServeHTTP(w, r)
		}))
		t.Cleanup(ts.Close)
		h := startHub(t, UpstreamConfig{Name: "remote", Transport: TransportStreamableHTTP, URL: ts.URL + "/mcp",
			Prefix: "remote_", MaxMessageBytes: max})
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("the upstream wrote %d bytes of one line and goes on", written.Load())
		}
		if got := callText(t, h, "remote_echo", map[string]any{"text": "still here"}); got != "still here" {
			t.Errorf("a call after the stream was cut: got %q", got)
		}
		if w := written.Load(); w > slack {
			t.Errorf("the upstream wrote %d bytes of one line, want the gateway to stop reading near %d", w, max)
		}
	})
}

// TestBoundUpstreamHTTPErrorReply: an HTTP error reply of many megabytes
// fails its call with an error of at most the error-body limit, and the
// upstream serves the next call.
func TestBoundUpstreamHTTPErrorReply(t *testing.T) {
	mcpHandler := server.NewStreamableHTTPServer(fakeupstream.New("remote"))
	t.Cleanup(func() { mcpHandler.Shutdown(context.Background()) })
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, text, ok := postedCall(w, r); !ok {
			return
		} else if text == "huge-error" {
			w.WriteHeader(http.StatusInternalServerError)
			io.WriteString(w, strings.Repeat("e", 8<<20))
			return
		}
		mcpHandler.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	h := startHub(t, UpstreamConfig{Name: "remote", Transport: TransportStreamableHTTP, URL: ts.URL + "/mcp", Prefix: "remote_"})
	_, err := h.CallTool(t.Context(), "remote_echo", map[string]any{"text": "huge-error"}, nil)
	if err == nil {
		t.Fatal("a call answered by an 8 MiB HTTP 500 succeeded")
	}
	if n := len(err.Error()); n > upstream.DefaultMaxErrorBodyBytes+1024 {
		t.Errorf("the error is %d bytes, want at most about %d", n, upstream.DefaultMaxErrorBodyBytes)
	}
	if got := callText(t, h, "remote_echo", map[string]any{"text": "next"}); got != "next" {
		t.Errorf("the next call: got %q", got)
	}
}

// TestBoundUpstreamListingHub: an upstream (a real child process) whose
// tools/list has one item more than the limit is not served, with an
// error naming the limit; at the limit it is.
func TestBoundUpstreamListingHub(t *testing.T) {
	n := statusOf(startHub(t, stdioFake("alpha")), "alpha").Tools
	if n < 2 {
		t.Fatalf("the fake lists %d tools", n)
	}
	at := stdioFake("alpha")
	at.MaxListingItems = n
	if s := statusOf(startHub(t, at), "alpha"); s.State != StateConnected || s.Tools != n {
		t.Errorf("%d tools at the limit: got %s with %d tools (%s), want connected with all", n, s.State, s.Tools, s.Err)
	}
	over := stdioFake("alpha")
	over.MaxListingItems = n - 1
	s := statusOf(startHub(t, over), "alpha")
	if want := fmt.Sprintf("tools/list: more than %d items", n-1); s.State == StateConnected || !strings.Contains(s.Err, want) {
		t.Errorf("%d tools over a limit of %d: got %s (%q), want not connected, the error saying %q", n, n-1, s.State, s.Err, want)
	}
}

// TestBoundPlanThroughServer: run_plan over a real client and upstream
// fails the step past a plan bound, naming the step and the limit.
func TestBoundPlanThroughServer(t *testing.T) {
	h := startHub(t, builtinFake("alpha"))
	c := overHTTPWith(t, ServerOptions{Hub: h, Executor: executor.Options{MaxTextBytes: 100}})
	plan := func(text string) map[string]any {
		return map[string]any{"steps": []any{
			map[string]any{"id": "a", "tool": "alpha_echo", "args": map[string]any{"text": text}},
			map[string]any{"id": "twice", "tool": "alpha_echo", "args": map[string]any{"text": "$<<a.text>>$<<a.text>>"}},
		}}
	}
	if res := c.call(t, "run_plan", plan(strings.Repeat("x", 50))); res.IsError {
		t.Errorf("100 bytes of text at the limit: %s", resultText(res))
	}
	res := c.call(t, "run_plan", plan(strings.Repeat("x", 51)))
	if want := "- twice (alpha_echo): failed: args.text: plan limit: interpolated text over 100 bytes"; !res.IsError || !strings.Contains(resultText(res), want) {
		t.Errorf("102 bytes of text: got %q, want an error result saying %q", resultText(res), want)
	}
}
