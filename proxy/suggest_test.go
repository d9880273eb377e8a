package proxy

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/mcp-router/mcp-router/proxy/call"
)

func suggestCatalog() *Catalog {
	return buildCatalog(nil, []offer{
		offerOf(UpstreamConfig{Name: "fs", Prefix: "fs_"}, "read_file", "write_file", "list_directory"),
		offerOf(UpstreamConfig{Name: "notes", Prefix: "notes_"}, "read_file", "write_file"),
		offerOf(UpstreamConfig{Name: "calc", Prefix: "calc_"}, "add", "subtract", "multiply"),
		offerOf(UpstreamConfig{Name: "more", Prefix: "more_"}, "read_file"),
		offerOf(UpstreamConfig{Name: "zz", Prefix: "zz_"}, "read_file"),
	}, ReservedNames())
}

func TestCatalogSuggestsClosestNames(t *testing.T) {
	c := suggestCatalog()
	for _, tt := range []struct {
		name string
		want []string
	}{
		{"read_file", []string{"fs_read_file", "zz_read_file", "more_read_file"}}, // own name across prefixes, closest first, at most three
		{"files_write_file", []string{"fs_write_file", "notes_write_file"}},       // another prefix, same own name
		{"calc_ad", []string{"calc_add"}},                                         // a typo
		{"calc_multiplyy", []string{"calc_multiply"}},
		{"send_email", nil},
		{strings.Repeat("read_file", 20), nil}, // too long to be a name: no search
	} {
		if got := c.Suggest(tt.name); !slices.Equal(got, tt.want) {
			t.Errorf("Suggest(%.30q): got %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestUnknownToolCallSaysDidYouMean(t *testing.T) {
	h := startHub(t, builtinFake("alpha"))
	_, err := h.CallTool(t.Context(), "echo", map[string]any{"text": "x"}, nil)
	var ue *UpstreamError
	if !errors.As(err, &ue) || ue.Kind != call.KindUnknownTool || !strings.Contains(err.Error(), "unknown tool; did you mean alpha_echo") {
		t.Fatalf("got %v, want unknown_tool suggesting alpha_echo", err)
	}
	c := overHTTP(t, h)
	res := c.call(t, "call_tool", map[string]any{"name": "alpha_ecko", "arguments": map[string]any{"text": "x"}})
	if text := resultText(res); !res.IsError || !strings.Contains(text, "did you mean alpha_echo?") {
		t.Errorf("call_tool of alpha_ecko: got %q (isError %v), want an error suggesting alpha_echo", text, res.IsError)
	}
	res = c.call(t, "run_plan", map[string]any{"steps": []any{
		map[string]any{"id": "first", "tool": "alpha_echo", "args": map[string]any{"text": "x"}},
		map[string]any{"id": "second", "tool": "echo", "args": map[string]any{"text": "y"}},
	}})
	if text := resultText(res); !res.IsError || !strings.Contains(text, `step "second": tool: the catalog has no tool "echo"; did you mean alpha_echo?`) {
		t.Errorf("run_plan naming echo: got %q, want a validation error naming the step and suggesting alpha_echo", text)
	}
}
