package apps

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/mcp"
)

func TestURIsAreUniquePerUpstreamAndGoBack(t *testing.T) {
	for _, tt := range []struct{ up, own, shown string }{
		{"weather", "ui://widget", "ui://weather/widget"},
		{"weather", "ui://weather-server/dashboard", "ui://weather/weather-server/dashboard"},
		{"a.b-c_d", "ui://x", "ui://a.b-c_d/x"},
		{"weather", "file:///widget", "file:///widget"}, // not a view: not renamed
	} {
		if got := URI(tt.up, tt.own); got != tt.shown {
			t.Errorf("URI(%q, %q) = %q, want %q", tt.up, tt.own, got, tt.shown)
		}
		if got := Original(tt.up, tt.shown); got != tt.own {
			t.Errorf("Original(%q, %q) = %q, want %q", tt.up, tt.shown, got, tt.own)
		}
	}
	if got := Original("other", "ui://weather/widget"); got != "ui://weather/widget" {
		t.Errorf("another upstream's URI: got %q, want it as it is", got)
	}
}

func TestToolMetaRewritesEveryViewKeyAndLeavesTheListingAlone(t *testing.T) {
	own := map[string]any{
		"ui":                    map[string]any{"resourceUri": "ui://widget", "visibility": []any{"model"}},
		"ui/resourceUri":        "ui://widget",
		"openai/outputTemplate": "ui://widget/v2",
		"other":                 "ui://not-a-view-key",
	}
	meta := mcp.NewMetaFromMap(own)
	rewritten, dropped := ToolMeta("w", meta)
	got := rewritten.AdditionalFields
	want := map[string]any{
		"ui":                    map[string]any{"resourceUri": "ui://w/widget", "visibility": []any{"model"}},
		"ui/resourceUri":        "ui://w/widget",
		"openai/outputTemplate": "ui://w/widget/v2",
		"other":                 "ui://not-a-view-key",
	}
	if diff := cmp.Diff(want, got); diff != "" || dropped != nil {
		t.Errorf("rewritten _meta (-want +got):\n%s\ndropped %v", diff, dropped)
	}
	if ui := meta.AdditionalFields["ui"].(map[string]any); ui["resourceUri"] != "ui://widget" || meta.AdditionalFields["ui/resourceUri"] != "ui://widget" {
		t.Errorf("the upstream's _meta was changed: %v", meta.AdditionalFields)
	}
	if diff := cmp.Diff([]string{"ui://widget", "ui://widget/v2"}, ViewURIs(meta)); diff != "" {
		t.Errorf("ViewURIs (-want +got):\n%s", diff)
	}
	plain := mcp.NewMetaFromMap(map[string]any{"k": "v"})
	if m, _ := ToolMeta("w", plain); m != plain {
		t.Error("a _meta that names no view was copied or changed")
	}
	if m, _ := ToolMeta("w", nil); m != nil {
		t.Error("a nil _meta became one")
	}
}

// A view key whose value is not a ui:// URI is dropped (the specification
// requires ui://) and named; the tool's other _meta stays.
func TestToolMetaDropsAViewURIThatIsNotUI(t *testing.T) {
	meta := mcp.NewMetaFromMap(map[string]any{
		"ui":             map[string]any{"resourceUri": "https://evil.example/app.html", "visibility": []any{"model"}},
		"ui/resourceUri": "file:///widget.html",
		"other":          "kept",
	})
	got, dropped := ToolMeta("w", meta)
	want := map[string]any{"ui": map[string]any{"visibility": []any{"model"}}, "other": "kept"}
	if diff := cmp.Diff(want, got.AdditionalFields); diff != "" {
		t.Errorf("_meta (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"ui.resourceUri", "ui/resourceUri"}, dropped); diff != "" {
		t.Errorf("dropped (-want +got):\n%s", diff)
	}
	if ui := meta.AdditionalFields["ui"].(map[string]any); ui["resourceUri"] != "https://evil.example/app.html" {
		t.Errorf("the upstream's _meta was changed: %v", meta.AdditionalFields)
	}
}

func TestContentsAndTemplatesTakeTheGatewaysURIs(t *testing.T) {
	meta := map[string]any{"ui": map[string]any{"csp": map[string]any{"connectDomains": []any{"https://a.example"}}}}
	got := Contents("w", []mcp.ResourceContents{
		mcp.TextResourceContents{URI: "ui://widget", MIMEType: MIMEType, Text: "<html>", Meta: meta},
		mcp.BlobResourceContents{URI: "ui://logo", Blob: "AA=="},
		mcp.TextResourceContents{URI: "file:///x", Text: "x"},
	})
	want := []mcp.ResourceContents{
		mcp.TextResourceContents{URI: "ui://w/widget", MIMEType: MIMEType, Text: "<html>", Meta: meta},
		mcp.BlobResourceContents{URI: "ui://w/logo", Blob: "AA=="},
		mcp.TextResourceContents{URI: "file:///x", Text: "x"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("contents (-want +got):\n%s", diff)
	}
	tpl := mcp.NewResourceTemplate("ui://chart/{id}", "chart").URITemplate
	if got := Template("w", tpl).Raw(); got != "ui://w/chart/{id}" {
		t.Errorf("template: got %q, want ui://w/chart/{id}", got)
	}
	if tpl.Raw() != "ui://chart/{id}" {
		t.Errorf("the upstream's template was changed: %q", tpl.Raw())
	}
	if other := mcp.NewResourceTemplate("file:///{p}", "f").URITemplate; Template("w", other) != other {
		t.Error("a template that is not a view's was renamed")
	}
}
