package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-router/mcp-router/proxy/call"
	"github.com/mcp-router/mcp-router/routing"
)

// appUpstream serves, over streamable HTTP, a charts server with an MCP
// Apps interface: draw_chart for the model and the app, refresh_chart for
// the app only.
func appUpstream(t *testing.T) UpstreamConfig {
	t.Helper()
	s := server.NewMCPServer("charts", "1.0.0", server.WithToolCapabilities(true))
	ok := func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("ok"), nil
	}
	for _, tt := range []struct{ name, desc, vis string }{
		{"draw_chart", "Draw a chart of sales figures.", `["model","app"]`},
		{"refresh_chart", "Refresh the chart of sales figures with new data.", `["app"]`},
	} {
		var meta map[string]any
		if err := json.Unmarshal([]byte(`{"ui":{"resourceUri":"ui://charts/view","visibility":`+tt.vis+`}}`), &meta); err != nil {
			t.Fatal(err)
		}
		tool := mcp.NewTool(tt.name, mcp.WithDescription(tt.desc))
		tool.Meta = mcp.NewMetaFromMap(meta)
		s.AddTool(tool, ok)
	}
	ts := httptest.NewServer(server.NewStreamableHTTPServer(s))
	t.Cleanup(ts.Close)
	return UpstreamConfig{Name: "charts", Transport: TransportStreamableHTTP, URL: ts.URL + "/mcp", Prefix: "charts_"}
}

// A tool its server keeps for its app (_meta.ui.visibility without
// "model") is in no tool list, never routed, and refused by name.
func TestAppOnlyToolIsNeverOfferedToTheModel(t *testing.T) {
	h := startHub(t, appUpstream(t))
	if _, ok := h.Catalog().Tool("charts_draw_chart"); !ok {
		t.Fatal("charts_draw_chart, visible to the model, is not in the catalog")
	}
	all := overHTTP(t, h) // mode all: every catalog tool
	if names := all.toolNames(t); slices.Contains(names, "charts_refresh_chart") || !slices.Contains(names, "charts_draw_chart") {
		t.Errorf("tools/list %v: want charts_draw_chart and not charts_refresh_chart", names)
	}
	routed := overHTTPWith(t, ServerOptions{Hub: h, Router: routing.NewRouter(routing.RouterOptions{}),
		Session: routing.SessionOptions{MaxDiscoveries: 10, ResetAfter: time.Hour}})
	res := routed.call(t, "request_more_tools", map[string]any{"query": "refresh the chart of sales figures with new data",
		"tools": []any{"charts_refresh_chart"}})
	if text := resultText(res); strings.Contains(text, "- charts_refresh_chart") || !strings.Contains(text, "charts_draw_chart") {
		t.Errorf("request_more_tools routed the app-only tool, or not the other:\n%s", text)
	}
	if names := routed.toolNames(t); slices.Contains(names, "charts_refresh_chart") {
		t.Errorf("belt %v holds the app-only tool", names)
	}
	const why = `its server marks it for its app's interface only (_meta.ui.visibility does not include "model")`
	for _, c := range []struct {
		name string
		res  func() string
	}{
		{"call_tool", func() string {
			return resultText(all.call(t, "call_tool", map[string]any{"name": "charts_refresh_chart"}))
		}},
		{"run_plan", func() string {
			return resultText(all.call(t, "run_plan", map[string]any{"steps": []any{
				map[string]any{"id": "r", "tool": "charts_refresh_chart", "args": map[string]any{}}}}))
		}},
	} {
		if text := c.res(); !strings.Contains(text, why) {
			t.Errorf("%s of charts_refresh_chart: got %q, want a refusal saying %s", c.name, text, why)
		}
	}
	// A tools/call of a name not listed is refused by the MCP server itself.
	if res, err := all.session.CallTool(t.Context(), &sdk.CallToolParams{Name: "charts_refresh_chart"}); err == nil && !res.IsError {
		t.Errorf("a direct tools/call of the app-only tool succeeded: %q", resultText(res))
	}
	_, err := h.CallTool(t.Context(), "charts_refresh_chart", map[string]any{}, nil)
	var ue *UpstreamError
	if !errors.As(err, &ue) || ue.Kind != call.KindBlocked || !errors.Is(err, ErrAppOnly) {
		t.Errorf("hub call: %v, want tool_blocked wrapping ErrAppOnly", err)
	}
}
