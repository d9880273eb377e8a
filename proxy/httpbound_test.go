package proxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcp-router/mcp-router/executor"
	"github.com/mcp-router/mcp-router/internal/fakeupstream"
)

// TestBoundUpstreamHTTPBody reads replies of each kind at their limits
// through boundedBodies: just at the limit passes whole, one byte over
// fails with ErrMessageTooLarge, having handed on no more than the limit.
func TestBoundUpstreamHTTPBody(t *testing.T) {
	const max, maxError = 1000, 100
	line := func(n int) string { return "data: " + strings.Repeat("x", n-len("data: ")) + "\n" }
	tests := []struct {
		name, ctype string
		status      int
		body        string
		wantErr     bool
	}{
		{"json at the limit", "application/json", 200, strings.Repeat("x", max), false},
		{"json over the limit", "application/json", 200, strings.Repeat("x", max+1), true},
		{"no type over the limit", "", 202, strings.Repeat("x", max+1), true},
		{"error at its limit", "application/json", 500, strings.Repeat("x", maxError), false},
		{"error over its limit", "text/plain", 500, strings.Repeat("x", maxError+1), true},
		{"error over its limit, event-stream type", "text/event-stream", 400, strings.Repeat("x", maxError+1), true},
		{"event-stream line at the limit", "text/event-stream", 200, line(max) + "\n", false},
		{"event-stream line over the limit", "text/event-stream", 200, line(max+1) + "\n", true},
		{"event-stream line over the limit, no newline", "text/event-stream", 200, strings.Repeat("x", max+1), true},
		{"event of two lines at the limit", "text/event-stream", 200, line(max/2) + line(max/2) + "\n", false},
		{"event of two lines over the limit", "text/event-stream", 200, line(max/2) + line(max/2+1) + "\n", true},
		{"many events each within the limit", "text/event-stream", 200, strings.Repeat(line(max)+"\r\n", 50), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if tt.ctype != "" {
					w.Header().Set("Content-Type", tt.ctype)
				}
				w.WriteHeader(tt.status)
				io.WriteString(w, tt.body)
			}))
			defer ts.Close()
			var reported atomic.Int32
			cl := &http.Client{Transport: &boundedBodies{next: http.DefaultTransport, max: max, maxError: maxError,
				report: func(error) { reported.Add(1) }}}
			resp, err := cl.Get(ts.URL)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			got, err := io.ReadAll(resp.Body)
			if !tt.wantErr {
				if err != nil || string(got) != tt.body {
					t.Fatalf("got %d bytes, error %v; want the %d bytes whole", len(got), err, len(tt.body))
				}
				return
			}
			if !errors.Is(err, ErrMessageTooLarge) {
				t.Fatalf("got error %v, want ErrMessageTooLarge", err)
			}
			limit := max
			if tt.status >= 300 {
				limit = maxError
			}
			if !strings.Contains(err.Error(), fmt.Sprintf("over %d bytes", limit)) {
				t.Errorf("error %q does not name the limit %d", err, limit)
			}
			handed := string(got)
			if tt.ctype == "text/event-stream" && tt.status < 300 { // the last event, less its line ends
				events := strings.Split(handed, "\n\n")
				handed = strings.ReplaceAll(events[len(events)-1], "\n", "")
			}
			if len(handed) > limit {
				t.Errorf("handed on %d bytes, more than the limit %d", len(handed), limit)
			}
			if reported.Load() != 1 {
				t.Errorf("reported %d times, want once", reported.Load())
			}
		})
	}
}

// endless writes a reply of the given type that never ends a line, until
// the client stops reading; it counts what it wrote.
func endless(w http.ResponseWriter, ctype, prefix string, written *atomic.Int64) {
	w.Header().Set("Content-Type", ctype)
	w.WriteHeader(http.StatusOK)
	io.WriteString(w, prefix)
	chunk := []byte(strings.Repeat("x", 32<<10))
	for written.Load() < 1<<30 {
		n, err := w.Write(chunk)
		written.Add(int64(n))
		if err != nil {
			return
		}
		w.(http.Flusher).Flush()
	}
}

// TestBoundUpstreamHTTPStreams: an upstream that sends one endless line
// on the GET stream of streamable HTTP, or on the legacy SSE stream, is
// cut off near the message limit: the gateway stops reading, its memory
// does not follow the stream. Over streamable HTTP the calls go on.
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
				endless(w, "text/event-stream", "data: ", &written)
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
	t.Run("legacy SSE stream", func(t *testing.T) {
		var written atomic.Int64
		done := make(chan struct{})
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodGet {
				defer close(done)
				endless(w, "text/event-stream", "event: endpoint\ndata: /message\n\nevent: message\ndata: ", &written)
				return
			}
			w.WriteHeader(http.StatusAccepted)
		}))
		t.Cleanup(ts.Close)
		cfg := UpstreamConfig{Name: "legacy", Transport: TransportSSE, URL: ts.URL + "/sse", MaxMessageBytes: max}
		ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
		defer cancel()
		c, err := dial(ctx, cfg, slog.New(slog.DiscardHandler), nil, nil)
		if err == nil {
			defer c.close()
		}
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("the upstream wrote %d bytes of one line and goes on", written.Load())
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
	if n := len(err.Error()); n > DefaultMaxErrorBodyBytes+1024 {
		t.Errorf("the error is %d bytes, want at most about %d", n, DefaultMaxErrorBodyBytes)
	}
	if got := callText(t, h, "remote_echo", map[string]any{"text": "next"}); got != "next" {
		t.Errorf("the next call: got %q", got)
	}
}

// TestBoundUpstreamListing follows listings of every kind from a real
// upstream that pages them, with a budget at and just under their size.
func TestBoundUpstreamListing(t *testing.T) {
	const n = 5
	s := server.NewMCPServer("paged", "1", server.WithPaginationLimit(2),
		server.WithResourceCapabilities(false, false), server.WithPromptCapabilities(false), server.WithToolCapabilities(false))
	for i := range n {
		name := fmt.Sprintf("x%d", i)
		s.AddTool(mcp.NewTool(name), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) { return nil, nil })
		s.AddResource(mcp.NewResource("file:///"+name, name), nil)
		s.AddResourceTemplate(mcp.NewResourceTemplate("file:///"+name+"/{id}", name), nil)
		s.AddPrompt(mcp.NewPrompt(name), nil)
	}
	cl, err := client.NewInProcessClient(s)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	if err := cl.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	var init mcp.InitializeRequest
	init.Params.ProtocolVersion = DefaultProtocolVersion
	if _, err := cl.Initialize(t.Context(), init); err != nil {
		t.Fatal(err)
	}
	kinds := []struct {
		method string
		list   func(b *listBudget) (int, error)
	}{
		{"tools/list", func(b *listBudget) (int, error) { r, err := listTools(t.Context(), cl, b, nil); return len(r), err }},
		{"resources/list", func(b *listBudget) (int, error) { r, err := listResources(t.Context(), cl, b); return len(r), err }},
		{"resources/templates/list", func(b *listBudget) (int, error) {
			r, err := listResourceTemplates(t.Context(), cl, b)
			return len(r), err
		}},
		{"prompts/list", func(b *listBudget) (int, error) { r, err := listPrompts(t.Context(), cl, b); return len(r), err }},
	}
	for _, k := range kinds {
		t.Run(k.method, func(t *testing.T) {
			whole := UpstreamConfig{}.listBudget(k.method)
			if got, err := k.list(whole); err != nil || got != n {
				t.Fatalf("unbounded: got %d, %v; want %d items", got, err, n)
			}
			size := whole.bytes
			for _, tt := range []struct {
				name         string
				items, bytes int
				want         string
			}{
				{"items at the limit", n, 0, ""},
				{"items over the limit", n - 1, 0, fmt.Sprintf("more than %d items", n-1)},
				{"bytes at the limit", 0, size, ""},
				{"bytes over the limit", 0, size - 1, fmt.Sprintf("more than %d bytes", size-1)},
			} {
				b := UpstreamConfig{MaxListingItems: tt.items, MaxListingBytes: tt.bytes}.listBudget(k.method)
				got, err := k.list(b)
				switch {
				case tt.want == "" && (err != nil || got != n):
					t.Errorf("%s: got %d, %v; want %d items", tt.name, got, err, n)
				case tt.want != "" && (!errors.Is(err, ErrListingTooLarge) || !strings.Contains(err.Error(), tt.want) ||
					!strings.Contains(err.Error(), k.method)):
					t.Errorf("%s: got error %v, want ErrListingTooLarge naming %s and %q", tt.name, err, k.method, tt.want)
				}
			}
		})
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
