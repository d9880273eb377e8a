package proxy

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-router/mcp-router/routing"
)

// listCounts counts the list_changed notifications a client hears.
type listCounts struct {
	mu                   sync.Mutex
	tools, prompts, rsrc int
	toolsHeard           chan struct{}
}

func (l *listCounts) get() (tools, prompts, rsrc int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.tools, l.prompts, l.rsrc
}

// countingStdioClient connects a go-sdk client over stdio to a server of
// opts and counts the list_changed notifications it hears.
func countingStdioClient(t *testing.T, opts ServerOptions) (*sdk.ClientSession, *listCounts) {
	t.Helper()
	srv := NewServer(opts)
	t.Cleanup(srv.Close)
	fromProxy, toProxy := stdioPipes(t, srv)
	l := &listCounts{toolsHeard: make(chan struct{}, 64)}
	bump := func(n *int) { l.mu.Lock(); *n++; l.mu.Unlock() }
	cl := sdk.NewClient(&sdk.Implementation{Name: "counting", Version: "1"}, &sdk.ClientOptions{
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) {
			bump(&l.tools)
			l.toolsHeard <- struct{}{}
		},
		PromptListChangedHandler:   func(context.Context, *sdk.PromptListChangedRequest) { bump(&l.prompts) },
		ResourceListChangedHandler: func(context.Context, *sdk.ResourceListChangedRequest) { bump(&l.rsrc) },
	})
	s, err := cl.Connect(t.Context(), &sdk.IOTransport{Reader: fromProxy, Writer: toProxy}, sessionEra)
	if err != nil {
		t.Fatalf("connect over stdio: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s, l
}

// Eight upstreams joining together behind a belt change the catalog but
// not the tools a stdio client sees: it hears no list_changed for them,
// and one when its belt changes (routed a joined upstream's tool).
func TestQuietJoinsSendNoListChangedBehindABelt(t *testing.T) {
	names := make([]string, 8)
	ups := []UpstreamConfig{builtinFake("alpha")}
	for i := range names {
		names[i] = fmt.Sprintf("joiner%d", i)
		ups = append(ups, toolsUpstream(names[i], names[i]+"_", fmt.Sprintf("forecast_weather_%d", i)))
	}
	g := newGates(t, names...)
	h := launchHub(t, g, Options{Upstreams: ups})
	eventually(t, faultWait, "alpha to connect", func() bool { return statusOf(h, "alpha").State == StateConnected })
	s, counts := countingStdioClient(t, ServerOptions{Hub: h, Router: routing.NewRouter(routing.RouterOptions{})})
	before, err := s.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	g.openAll()
	eventually(t, faultWait, "the 8 upstreams to join", func() bool {
		for _, n := range names {
			if statusOf(h, n).State != StateConnected {
				return false
			}
		}
		_, ok := h.Catalog().Tool("joiner7_forecast_weather_7")
		return ok
	})
	after, err := s.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(after.Tools) != len(before.Tools) {
		t.Fatalf("the belt grew from %d to %d tools on joins alone", len(before.Tools), len(after.Tools))
	}
	// The belt changes: one list_changed, the first the client hears.
	res, err := s.CallTool(t.Context(), &sdk.CallToolParams{Name: "request_more_tools", Arguments: map[string]any{"query": "forecast the weather"}})
	if err != nil || res.IsError {
		t.Fatalf("request_more_tools: %v %+v", err, res)
	}
	select {
	case <-counts.toolsHeard:
	case <-time.After(faultWait):
		t.Fatal("no tools/list_changed after the belt changed")
	}
	tools, prompts, rsrc := counts.get()
	if tools != 1 || prompts != 0 || rsrc != 0 {
		t.Errorf("list_changed heard: tools %d, prompts %d, resources %d; want 1, 0, 0 (8 joins behind a belt, then one belt change)", tools, prompts, rsrc)
	}
}

// Without a router a stdio client sees every tool: upstreams joining
// together reach it as one tools/list_changed, and it lists them all.
func TestJoinsTogetherSendOneListChanged(t *testing.T) {
	names := make([]string, 8)
	ups := []UpstreamConfig{builtinFake("alpha")}
	for i := range names {
		names[i] = fmt.Sprintf("joiner%d", i)
		ups = append(ups, toolsUpstream(names[i], names[i]+"_", "ping"))
	}
	g := newGates(t, names...)
	h := launchHub(t, g, Options{Upstreams: ups})
	eventually(t, faultWait, "alpha to connect", func() bool { return statusOf(h, "alpha").State == StateConnected })
	s, counts := countingStdioClient(t, ServerOptions{Hub: h})
	g.openAll()
	var listed []string
	for len(listed) < len(names) {
		select {
		case <-counts.toolsHeard:
		case <-time.After(faultWait):
			t.Fatalf("after the joins, the client lists %v; want every joiner's ping", listed)
		}
		res, err := s.ListTools(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		listed = listed[:0]
		for _, tool := range res.Tools {
			if up, ok := strings.CutSuffix(tool.Name, "_ping"); ok && slices.Contains(names, up) {
				listed = append(listed, tool.Name)
			}
		}
	}
	tools, prompts, rsrc := counts.get()
	t.Logf("list_changed heard for 8 joins: tools %d, prompts %d, resources %d", tools, prompts, rsrc)
	if tools > 2 || prompts != 0 || rsrc != 0 {
		// Two at most: the hub rebuilds for the first joiner while the
		// others connect, and then once for all of those.
		t.Errorf("want at most 2 tools/list_changed and no other")
	}
}
