package call

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

// resultSize counts what json.Marshal would write for the results it
// counts, and leaves the others to the encoder.
func TestResultSizeIsMarshalLength(t *testing.T) {
	meta := &mcp.Meta{ProgressToken: "p1", AdditionalFields: map[string]any{
		"io.modelcontextprotocol/serverInfo": map[string]any{"name": "alpha", "version": "1.0"},
		"numbers":                            []any{1.5e-7, 1e21, int64(-42), 3, 0.0},
		"others":                             []any{true, false, nil, "a", []any{}, map[string]any{}},
	}}
	text := func(s string) mcp.TextContent { return mcp.NewTextContent(s) }
	type tc struct {
		name    string
		res     *mcp.CallToolResult
		counted bool
	}
	cases := []tc{
		{"text", mcp.NewToolResultText("hello"), true},
		{"escapes", mcp.NewToolResultText("<b>\"q\" & \\ \b\f\n\r\t\x00\x1f\x7f</b>"), true},
		{"unicode", mcp.NewToolResultText("ünïcode \u2028 \u2029 \ufffd 😀"), true},
		{"invalid utf-8", mcp.NewToolResultText("a\xffb\xe2\x80c\xc3"), true},
		{"empty", &mcp.CallToolResult{}, true},
		{"several items", &mcp.CallToolResult{Content: []mcp.Content{text("a"), text(""), text("c")}}, true},
		{"error", mcp.NewToolResultError("boom"), true},
		{"meta and result type", &mcp.CallToolResult{Result: mcp.Result{Meta: meta, ResultType: mcp.ResultTypeComplete},
			Content: []mcp.Content{text("x")}}, true},
		{"item meta", &mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent{Type: "text", Text: "x",
			Meta: &mcp.Meta{ProgressToken: int64(7)}}}}, true},
		{"shadowed token", &mcp.CallToolResult{Result: mcp.Result{Meta: &mcp.Meta{ProgressToken: "a",
			AdditionalFields: map[string]any{"progressToken": "bb"}}}}, true},
		{"raw structured", &mcp.CallToolResult{Content: []mcp.Content{text("x")},
			RawStructuredContent: json.RawMessage(`{"a":[1,2.5e-9,"s"],"b":null}`), StructuredContent: map[string]any{"ignored": true}}, true},
		{"raw structured with space and html", &mcp.CallToolResult{RawStructuredContent: json.RawMessage(`{ "a" : "<&>\u2028" }`)}, false},
		{"structured map", &mcp.CallToolResult{StructuredContent: map[string]any{
			"error": map[string]any{"kind": "x<y", "retry_after_ms": int64(1500), "n": 3}}}, true},
		{"request state", &mcp.CallToolResult{Content: []mcp.Content{text("x")},
			MultiRoundTripResult: mcp.MultiRoundTripResult{RequestState: "s"}}, true},
		{"image", &mcp.CallToolResult{Content: []mcp.Content{mcp.NewImageContent("AAAA", "image/png")}}, false},
		{"annotated", &mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent{Type: "text", Text: "x",
			Annotated: mcp.Annotated{Annotations: &mcp.Annotations{Priority: ptr(0.5)}}}}}, false},
		{"typed structured", &mcp.CallToolResult{StructuredContent: struct{ A int }{1}}, false},
		{"nan", &mcp.CallToolResult{StructuredContent: map[string]any{"x": math.NaN()}}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b, err := json.Marshal(c.res)
			if err != nil && c.counted {
				t.Fatal(err)
			}
			got := resultSize(c.res)
			if !c.counted {
				if got != uncounted {
					t.Errorf("resultSize: got %d, want it uncounted", got)
				}
			} else if got != len(b) {
				t.Errorf("resultSize: got %d, want %d (%s)", got, len(b), b)
			}
			if want := len(b); err == nil && jsonSize(c.res) != want {
				t.Errorf("jsonSize: got %d, want %d", jsonSize(c.res), want)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

// A result decoded from any upstream reply is counted as json.Marshal
// writes it, or left to the encoder.
func FuzzResultSize(f *testing.F) {
	f.Add(`{"content":[{"type":"text","text":"a<b>\u2028\ud800"}],"structuredContent":{"x":[1e21,-0,1.5e-7]},"_meta":{"k":"v"},"isError":true}`)
	f.Add(`{"content":[{"type":"text","text":"x","_meta":{"progressToken":3}}],"structuredContent": { "a" : 1 }}`)
	f.Fuzz(func(t *testing.T, reply string) {
		var res mcp.CallToolResult
		if json.Unmarshal([]byte(reply), &res) != nil {
			return
		}
		b, err := json.Marshal(&res)
		got := resultSize(&res)
		if err != nil || got == uncounted {
			return
		}
		if got != len(b) {
			t.Errorf("resultSize: got %d, want %d (%s)", got, len(b), b)
		}
	})
}
