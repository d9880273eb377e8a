package proxy

import (
	"slices"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-router/mcp-router/proxy/internal/upstream"
)

func toolsNamed(names ...string) []mcp.Tool {
	out := make([]mcp.Tool, len(names))
	for i, n := range names {
		out[i] = mcp.Tool{Name: n}
	}
	return out
}

func offerOf(cfg UpstreamConfig, names ...string) offer {
	tools := toolsNamed(names...)
	return offer{cfg: cfg, Listing: upstream.Listing{Tools: tools, Raw: tools}}
}

func catalogNames(c *Catalog) []string {
	var out []string
	for _, t := range c.Tools {
		out = append(out, t.Name)
	}
	return out
}

func TestCatalogDefaultPrefixIsNotAddedTwice(t *testing.T) {
	for _, tt := range []struct {
		name  string
		cfg   UpstreamConfig
		tools []string
		want  []string
		note  bool
	}{
		{"default prefix already there", UpstreamConfig{Name: "slack", Prefix: "slack_", DefaultPrefix: true},
			[]string{"slack_post_message", "slack_list_channels"}, []string{"slack_list_channels", "slack_post_message"}, true},
		{"one tool without it", UpstreamConfig{Name: "slack", Prefix: "slack_", DefaultPrefix: true},
			[]string{"slack_post_message", "search"}, []string{"slack_search", "slack_slack_post_message"}, false},
		{"explicit prefix is honoured", UpstreamConfig{Name: "slack", Prefix: "slack_"},
			[]string{"slack_post_message"}, []string{"slack_slack_post_message"}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := buildCatalog(nil, []offer{offerOf(tt.cfg, tt.tools...)}, ReservedNames())
			if got := catalogNames(c); !slices.Equal(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
			if got := len(c.Notes) == 1 && strings.Contains(c.Notes[0], `upstream slack: every tool already starts with "slack_"`); got != tt.note {
				t.Errorf("notes %q: want a note %v", c.Notes, tt.note)
			}
			for _, tool := range c.Tools {
				if !slices.Contains(tt.tools, tool.Original) {
					t.Errorf("%s: own name %q, want one of the upstream's", tool.Name, tool.Original)
				}
			}
		})
	}
}

func TestCatalogNameOverTheLimitSaysWhichPrefixFits(t *testing.T) {
	long := "get_" + strings.Repeat("x", 50) // 54 characters
	for _, tt := range []struct {
		name string
		cfg  UpstreamConfig
		own  string
		want []string
	}{
		{"a shorter prefix fits", UpstreamConfig{Name: "analytics", Prefix: "analytics_warehouse_"}, long,
			[]string{"upstream analytics", `tool "` + long + `" left out`, "a prefix of at most 10 characters fits every tool",
				`upstreams.analytics.prefix: "analytics_"`}},
		{"only no prefix fits", UpstreamConfig{Name: "wh", Prefix: "wh_"}, "get_" + strings.Repeat("y", 59),
			[]string{`set upstreams.wh.prefix: ""`}},
		{"the own name alone is too long", UpstreamConfig{Name: "wh", Prefix: "wh_"}, strings.Repeat("z", 70),
			[]string{"own name is 70 characters", "upstreams.wh.tools.deny"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := buildCatalog(nil, []offer{offerOf(tt.cfg, tt.own, "ok")}, ReservedNames())
			if len(c.Problems) != 1 {
				t.Fatalf("problems %+v, want one", c.Problems)
			}
			for _, w := range tt.want {
				if !strings.Contains(c.Problems[0].Text, w) {
					t.Errorf("problem %q does not say %q", c.Problems[0].Text, w)
				}
			}
		})
	}
}

func TestCatalogKeepsAppOnlyToolsFromTheModel(t *testing.T) {
	ui := func(vis any) *mcp.Meta {
		return &mcp.Meta{AdditionalFields: map[string]any{"ui": map[string]any{"visibility": vis}}}
	}
	tools := []mcp.Tool{
		{Name: "refresh_chart", Meta: ui([]any{"app"})},
		{Name: "draw_chart", Meta: ui([]any{"model", "app"})},
		{Name: "plain"},
		{Name: "no_visibility", Meta: &mcp.Meta{AdditionalFields: map[string]any{"ui": map[string]any{"resourceUri": "ui://x"}}}},
		{Name: "empty_visibility", Meta: ui([]string{})},
	}
	c := buildCatalog(nil, []offer{{cfg: UpstreamConfig{Name: "charts", Prefix: "charts_"}, Listing: upstream.Listing{Tools: tools, Raw: tools}}}, nil)
	if got, want := catalogNames(c), []string{"charts_draw_chart", "charts_no_visibility", "charts_plain"}; !slices.Equal(got, want) {
		t.Errorf("tools %v, want %v", got, want)
	}
	var app []string
	for _, a := range c.AppOnly {
		app = append(app, a.Name)
	}
	if want := []string{"charts_refresh_chart", "charts_empty_visibility"}; !slices.Equal(app, want) {
		t.Errorf("app-only %v, want %v", app, want)
	}
}
