package call

import (
	"context"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-router/mcp-router/proxy/results"
)

func TestCutAtEndsOnALineOrACharacter(t *testing.T) {
	for _, tc := range []struct {
		name, text  string
		limit, want int
	}{
		{"fits", "short", 10, 5},
		{"after the last newline in reach", "aaaa\nbbbb\ncccc", 12, 10},
		{"a newline too early is not used", "a\nbbbbbbbbbbbb", 10, 10},
		{"never inside a character", "aaaaaaaaaé", 10, 9},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := CutAt(tc.text, tc.limit); got != tc.want {
				t.Errorf("CutAt(%q, %d) = %d, want %d", tc.text, tc.limit, got, tc.want)
			}
		})
	}
}

func TestCapCutsOnlyWhatReachesAModel(t *testing.T) {
	long := strings.Repeat("wörd ", 100) // 600 bytes, no newline
	upstream := func(context.Context, *Call) (*mcp.CallToolResult, error) { return mcp.NewToolResultText(long), nil }
	store := results.New(results.Options{})
	h := Chain(upstream, Cap(100, store))
	for _, tc := range []struct {
		name string
		c    Call
		cut  bool
	}{
		{"a model's call", Call{Tool: "t", Principal: "p"}, true},
		{"a plan step", Call{Tool: "t", Plan: "run-1", Step: "a"}, false},
		{"an in-process caller", Call{Tool: "t", Whole: true}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := h(t.Context(), &tc.c)
			if err != nil {
				t.Fatal(err)
			}
			first := res.Content[0].(mcp.TextContent).Text
			if !tc.cut {
				if first != long || len(res.Content) != 1 {
					t.Fatalf("got %d bytes in %d items, want the whole result", len(first), len(res.Content))
				}
				return
			}
			if len(first) > 100 || !utf8.ValidString(first) || !strings.HasPrefix(long, first) {
				t.Fatalf("the model got %q, want at most 100 bytes of the start", first)
			}
			if note := res.Content[1].(mcp.TextContent).Text; !strings.Contains(note, "The whole is kept for 1 hour at ") {
				t.Errorf("the note %q does not say for how long the whole is kept as a person would", note)
			}
			link, ok := res.Content[2].(mcp.ResourceLink)
			if !ok {
				t.Fatalf("no resource_link after the note: %#v", res.Content)
			}
			if whole, _, err := store.Read(tc.c.Who(), link.URI, 0, 0); err != nil || whole != long {
				t.Fatalf("the kept result: %d bytes, %v; want the whole %d", len(whole), err, len(long))
			}
		})
	}
}

// BenchmarkCapPassesAnOrdinaryResult is what the cap costs a call whose
// result fits: counting, nothing copied.
func BenchmarkCapPassesAnOrdinaryResult(b *testing.B) {
	res := mcp.NewToolResultStructured(map[string]any{"text": "hello", "server": "alpha"}, `{"server":"alpha","text":"hello"}`)
	upstream := func(context.Context, *Call) (*mcp.CallToolResult, error) { return res, nil }
	h := Chain(upstream, Cap(64<<10, results.New(results.Options{})))
	c := &Call{Tool: "alpha_echo"}
	b.ReportAllocs()
	for b.Loop() {
		if got, _ := h(b.Context(), c); got != res {
			b.Fatal("an ordinary result was copied")
		}
	}
}

func TestWithheldStructuredContentIsNoFailure(t *testing.T) {
	big := map[string]any{"rows": strings.Repeat("x", 200)}
	upstream := func(context.Context, *Call) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultStructured(big, "the rows"), nil
	}
	res, err := Chain(upstream, Cap(100, results.New(results.Options{})))(t.Context(), &Call{Tool: "t", Principal: "p"})
	if err != nil || !res.IsError || res.StructuredContent != nil || !Withheld(res) {
		t.Fatalf("got isError %v, withheld %v, %v; want an isError result that Withheld names a success", res.IsError, Withheld(res), err)
	}
	if Withheld(mcp.NewToolResultError("boom")) {
		t.Fatal("a failed call is taken for a withheld result")
	}
}
