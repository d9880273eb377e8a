package proxy

import (
	"context"
	"errors"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-router/mcp-router/internal/fakeollama"
	"github.com/mcp-router/mcp-router/proxy/call"
	"github.com/mcp-router/mcp-router/routing"
)

// What a client sees from its first second: these tests send their first
// request right after initialize, as Claude Desktop does, and repeat it so
// that a race (one time in three before) would show.
const firstSecondRuns = 30

// callNoFatal sends one tools/call and returns its result, or an isError result
// with the protocol error.
func (c *sdkClient) callNoFatal(ctx context.Context, name string, args map[string]any) *sdk.CallToolResult {
	res, err := c.session.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: err.Error()}}}
	}
	return res
}

// The instructions of a stdio session name the built-in servers and their
// tools (they join before initialize is answered) and the upstreams still
// starting, by name and description; once one has failed, a new session
// reads that it failed.
func TestStdioInstructionsNameBuiltinsAndStartingUpstreams(t *testing.T) {
	for i := range firstSecondRuns / 3 { // each stops a child process: a second each
		t.Run(strconv.Itoa(i), func(t *testing.T) {
			hung := hungStdio("tickets")
			hung.Description = "Tickets and incidents of the support desk"
			h := newTestHub(t, Options{Upstreams: []UpstreamConfig{builtinFake("alpha"), hung}, Builtin: fakeBuiltins})
			if err := h.Launch(t.Context()); err != nil {
				t.Fatal(err)
			}
			h.AwaitBuiltins(t.Context())
			c := overStdioWith(t, ServerOptions{Hub: h, Router: routing.NewRouter(routing.RouterOptions{})})
			got := c.session.InitializeResult().Instructions
			for _, want := range []string{"from 1 MCP server ", "Servers by domain: alpha.",
				"tickets (starting: Tickets and incidents of the support desk)"} {
				if !strings.Contains(got, want) {
					t.Fatalf("instructions lack %q:\n%s", want, got)
				}
			}
			if strings.Contains(got, "gateway to 0 tools") {
				t.Fatalf("instructions count no tools though alpha is built in:\n%s", got)
			}
		})
	}
	// The same server tells a later client that tickets failed, though the
	// catalog is the same.
	h := launchHub(t, newGates(t), Options{Upstreams: []UpstreamConfig{builtinFake("alpha"), hungStdio("tickets")}, InitTimeout: 3 * time.Second})
	h.AwaitBuiltins(t.Context())
	srv := NewServer(ServerOptions{Hub: h})
	t.Cleanup(srv.Close)
	ts := httptest.NewServer(srv.HTTPHandler())
	t.Cleanup(ts.Close)
	if got := sdkAt(t, ts.URL+"/mcp").session.InitializeResult().Instructions; !strings.Contains(got, "tickets (starting)") {
		t.Errorf("instructions while tickets starts:\n%s", got)
	}
	eventually(t, 2*faultWait, "tickets' first attempt to fail", func() bool { return !statusOf(h, "tickets").Starting })
	got := sdkAt(t, ts.URL+"/mcp").session.InitializeResult().Instructions
	if !strings.Contains(got, "tickets (failed)") && !strings.Contains(got, "tickets (retrying)") {
		t.Errorf("instructions once tickets failed:\n%s", got)
	}
	// No server is starting: nothing says a call waits, or "yet".
	if strings.Contains(got, "waits for a starting server") || strings.Contains(got, "not connected yet") || !strings.Contains(got, "Not connected (") {
		t.Errorf("instructions once tickets failed still promise a wait:\n%s", got)
	}
}

// When every pending server failed (a command that does not run), the
// instructions say they are not connected, and why, without "yet" or a
// wait that would not happen.
func TestInstructionsWhenEveryServerFailed(t *testing.T) {
	missing := UpstreamConfig{Name: "files", Transport: TransportStdio, Command: "/nonexistent/files-mcp", Prefix: "files_"}
	h := launchHub(t, newGates(t), Options{Upstreams: []UpstreamConfig{missing}})
	eventually(t, faultWait, "files' first attempt to fail", func() bool { return !statusOf(h, "files").Starting })
	got := overHTTP(t, h).session.InitializeResult().Instructions
	for _, bad := range []string{"yet", "waits for a starting server"} {
		if strings.Contains(got, bad) {
			t.Errorf("instructions with every server failed say %q:\n%s", bad, got)
		}
	}
	if !strings.Contains(got, "none connected (see below)") || !strings.Contains(got, "Not connected (their tools are not listed): files (") {
		t.Errorf("instructions with every server failed:\n%s", got)
	}
}

// A cold start, where every server is a child still starting (npx
// installing its package), reads as servers to come, never as a gateway
// of 0 tools.
func TestStdioInstructionsWhileNoServerHasConnected(t *testing.T) {
	hung := hungStdio("notes")
	hung.Description = "Notes on disk"
	h := newTestHub(t, Options{Upstreams: []UpstreamConfig{hung}})
	if err := h.Launch(t.Context()); err != nil {
		t.Fatal(err)
	}
	c := overStdioWith(t, ServerOptions{Hub: h, Router: routing.NewRouter(routing.RouterOptions{})})
	got := c.session.InitializeResult().Instructions
	if strings.Contains(got, "0 tools") || !strings.Contains(got, "gateway to 1 MCP server, none connected yet") ||
		!strings.Contains(got, "notes (starting: Notes on disk)") {
		t.Fatalf("instructions while the only server starts:\n%s", got)
	}
}

// A server left out for its configuration (a variable not set) is named
// in the instructions with why, so the model can tell the user that a
// capability is off rather than that it does not exist.
func TestStdioInstructionsNameDisabledServers(t *testing.T) {
	off := DisabledUpstream{Name: "tickets", Prefix: "tickets_", Description: "Support tickets",
		Err: errors.New("p.yaml:9: TICKETS_TOKEN is not set"), Reason: "environment variable TICKETS_TOKEN is not set"}
	h := newTestHub(t, Options{Upstreams: []UpstreamConfig{builtinFake("alpha")}, Builtin: fakeBuiltins, Disabled: []DisabledUpstream{off}})
	if err := h.Launch(t.Context()); err != nil {
		t.Fatal(err)
	}
	h.AwaitBuiltins(t.Context())
	c := overStdioWith(t, ServerOptions{Hub: h, Router: routing.NewRouter(routing.RouterOptions{})})
	got := c.session.InitializeResult().Instructions
	if want := "tickets (disabled, environment variable TICKETS_TOKEN is not set: Support tickets)"; !strings.Contains(got, want) || strings.Contains(got, "p.yaml") {
		t.Fatalf("instructions lack %q (or show the file):\n%s", want, got)
	}
}

// The pending servers are named within the instructions' bound; those past
// it are counted.
func TestInstructionsCountPendingServersPastTheBound(t *testing.T) {
	var pending []pendingServer
	for i := range 100 {
		pending = append(pending, pendingServer{Name: "server" + strconv.Itoa(i), State: "starting", About: strings.Repeat("about ", 30)})
	}
	text := catalogInstructions(&Catalog{}, pending, true, true)
	if len(text) > maxInstructions || !strings.Contains(text, "server0 (starting: about") || !strings.Contains(text, "more.") ||
		!strings.Contains(text, "run_plan") {
		t.Errorf("instructions with 100 starting servers (%d bytes, bound %d):\n%s", len(text), maxInstructions, text)
	}
}

// A discovery and a routing_feedback sent right after initialize, while
// the built-in upstream is still joining, see its tools: neither an empty
// discovery nor "not a catalog tool".
func TestFirstRequestsSeeTheUpstreamsJoining(t *testing.T) {
	for i := range firstSecondRuns {
		t.Run(strconv.Itoa(i), func(t *testing.T) {
			h := newTestHub(t, Options{Upstreams: []UpstreamConfig{builtinFake("alpha")}, Builtin: fakeBuiltins, StartWait: time.Minute})
			mem := fileLessons(t)
			srv := ServerOptions{Hub: h, Router: routing.NewRouter(routing.RouterOptions{Lessons: mem}), Lessons: mem}
			if err := h.Launch(t.Context()); err != nil {
				t.Fatal(err)
			}
			c := overStdioWith(t, srv)
			d := decodeDiscovery(t, c.call(t, "request_more_tools", map[string]any{"query": "echo the text back"}))
			if len(d.Tools) == 0 || d.Tools[0].Name != "alpha_echo" {
				t.Fatalf("discovery right after initialize: %+v, want alpha_echo first", d)
			}
			res := c.call(t, "routing_feedback", map[string]any{"query": "say it again", "right_tool": "alpha_echo"})
			if res.IsError {
				t.Fatalf("routing_feedback right after initialize: %s", resultText(res))
			}
		})
	}
}

// A discovery, a routing_feedback and a describe_tools sent while the
// upstream they are about is still starting wait for it, and succeed
// once it joins.
func TestMetaToolsWaitForAStartingUpstream(t *testing.T) {
	for i := range firstSecondRuns {
		t.Run(strconv.Itoa(i), func(t *testing.T) {
			g := newGates(t, "weather")
			weather := toolsUpstream("weather", "weather_", "forecast")
			weather.Description = "Weather forecasts: temperature and rain for any city"
			h := launchHub(t, g, Options{Upstreams: []UpstreamConfig{builtinFake("alpha"), weather}, StartWait: time.Minute})
			mem := fileLessons(t)
			c := overStdioWith(t, ServerOptions{Hub: h, Router: routing.NewRouter(routing.RouterOptions{Lessons: mem}), Lessons: mem})
			calls := []struct {
				tool string
				args map[string]any
				want string
			}{
				{"request_more_tools", map[string]any{"query": "will it rain in Paris tomorrow"}, "weather_forecast"},
				{"routing_feedback", map[string]any{"query": "rain tomorrow", "right_tool": "weather_forecast"}, "Learned lesson"},
				{"describe_tools", map[string]any{"tools": []string{"weather_forecast"}}, "input schema"},
			}
			done := make(chan int, len(calls))
			results := make([]*sdk.CallToolResult, len(calls))
			for i, call := range calls {
				go func() {
					results[i] = c.callNoFatal(t.Context(), call.tool, call.args)
					done <- i
				}()
			}
			select {
			case i := <-done:
				t.Fatalf("%s returned before weather joined: %s", calls[i].tool, resultText(results[i]))
			default:
			}
			g.open("weather")
			for range calls {
				select {
				case i := <-done:
					if res := results[i]; res.IsError || !strings.Contains(resultText(res), calls[i].want) {
						t.Errorf("%s once weather joined: isError %v, %q; want %q", calls[i].tool, res.IsError, resultText(res), calls[i].want)
					}
				case <-time.After(faultWait):
					t.Fatal("a meta-tool did not return after weather joined")
				}
			}
		})
	}
}

// Past StartWait, a meta-tool that names a tool of an upstream still
// starting says upstream_starting, naming it, never "not a catalog tool";
// a discovery names it whatever the request's words.
func TestMetaToolsSayUpstreamStartingPastTheWait(t *testing.T) {
	hung := hungStdio("hung")
	hung.Description = "Tickets of the support desk"
	h := launchHub(t, newGates(t), Options{Upstreams: []UpstreamConfig{builtinFake("alpha"), hung}, StartWait: 50 * time.Millisecond})
	h.AwaitBuiltins(t.Context())
	mem := fileLessons(t)
	noPlan := fakePlanner(t, func(fakeollama.ChatRequest) (string, error) { return "", errors.New("not asked") })
	c := overStdioWith(t, ServerOptions{Hub: h, Router: routing.NewRouter(routing.RouterOptions{Lessons: mem}), Lessons: mem, Planner: noPlan})

	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"routing_feedback", map[string]any{"query": "repeat", "right_tool": "hung_echo"}},
		{"plan", map[string]any{"query": "repeat", "tools": []any{"hung_echo"}}},
	} {
		res := c.call(t, tc.tool, tc.args)
		content, _ := res.StructuredContent.(map[string]any)
		detail, _ := content["error"].(map[string]any)
		if !res.IsError || detail["kind"] != string(call.KindStarting) || detail["upstream"] != "hung" || strings.Contains(resultText(res), "not a catalog tool") {
			t.Errorf("%s: isError %v, %v, %q; want upstream_starting naming hung", tc.tool, res.IsError, detail, resultText(res))
		}
	}
	res := c.call(t, "describe_tools", map[string]any{"tools": []string{"hung_echo"}})
	if !res.IsError || !strings.Contains(resultText(res), "hung_echo (server hung): upstream_starting: still starting for") ||
		strings.Contains(resultText(res), "Not in the catalog") {
		t.Errorf("describe_tools: isError %v, %q; want hung_echo starting", res.IsError, resultText(res))
	}
	for _, query := range []string{"echo the text back", "translate a poem into French"} {
		d := decodeDiscovery(t, c.call(t, "request_more_tools", map[string]any{"query": query}))
		if a, ok := alertOf(d, alertUpstreamStarting); !ok || !strings.Contains(a.Message, "server hung (Tickets of the support desk) is still starting") {
			t.Errorf("%q: alerts %+v, want upstream_starting naming hung", query, d.Alerts)
		}
		if _, ok := alertOf(d, "no_match"); ok {
			t.Errorf("%q: a no_match alert while hung is starting: %+v", query, d.Alerts)
		}
	}
}

// A client of the stateless era re-reads the instructions with
// server/discover: they name an upstream as starting while it is, and
// count its tools once it joined.
func TestDiscoverRereadsInstructionsAsUpstreamsJoin(t *testing.T) {
	g := newGates(t, "weather")
	weather := toolsUpstream("weather", "weather_", "forecast")
	weather.Description = "Weather forecasts"
	h := launchHub(t, g, Options{Upstreams: []UpstreamConfig{builtinFake("alpha"), weather}})
	eventually(t, faultWait, "alpha to join", func() bool { _, ok := h.Catalog().Tool("alpha_echo"); return ok })
	srv := NewServer(ServerOptions{Hub: h, Router: routing.NewRouter(routing.RouterOptions{})})
	t.Cleanup(srv.Close)
	c := connectEra(t, srv, "http", "")
	discover := func() string {
		res, err := c.Discover(t.Context(), mcpgo.DiscoverRequest{})
		if err != nil {
			t.Fatalf("server/discover: %v", err)
		}
		return res.Instructions
	}
	if got := discover(); !strings.Contains(got, "from 1 MCP server ") || !strings.Contains(got, "weather (starting: Weather forecasts)") {
		t.Errorf("instructions while weather starts:\n%s", got)
	}
	g.open("weather")
	eventually(t, faultWait, "weather to join", func() bool { _, ok := h.Catalog().Tool("weather_forecast"); return ok })
	if got := discover(); !strings.Contains(got, "from 2 MCP servers") || strings.Contains(got, "weather (starting") {
		t.Errorf("instructions once weather joined:\n%s", got)
	}
}
