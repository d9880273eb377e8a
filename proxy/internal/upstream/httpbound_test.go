package upstream

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
	"github.com/mcp-router/mcp-router/internal/fakeupstream"
	"github.com/mcp-router/mcp-router/proxy/internal/wire"
)

// TestBoundUpstreamHTTPBody reads replies of each kind at their limits
// through boundedBodies: just at the limit passes whole, one byte over
// fails with wire.ErrMessageTooLarge, having handed on no more than the limit.
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
			if !errors.Is(err, wire.ErrMessageTooLarge) {
				t.Fatalf("got error %v, want wire.ErrMessageTooLarge", err)
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
			whole := Config{}.listBudget(k.method)
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
				b := Config{MaxListingItems: tt.items, MaxListingBytes: tt.bytes}.listBudget(k.method)
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

// TestBoundUpstreamSSEStream: an upstream that sends one endless line on
// the legacy SSE stream is cut off near the message limit: the gateway
// stops reading, its memory does not follow the stream.
func TestBoundUpstreamSSEStream(t *testing.T) {
	const max = 64 << 10
	// What the kernel's socket buffers hold on both ends once the client
	// stops reading: far below what an unbounded reader would take.
	const slack = 16 << 20
	var written atomic.Int64
	done := make(chan struct{})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			defer close(done)
			fakeupstream.Endless(w, "text/event-stream", "event: endpoint\ndata: /message\n\nevent: message\ndata: ", &written)
			return
		}
		w.WriteHeader(http.StatusAccepted)
	}))
	t.Cleanup(ts.Close)
	cfg := Config{Name: "legacy", Transport: TransportSSE, URL: ts.URL + "/sse", MaxMessageBytes: max}
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
}
