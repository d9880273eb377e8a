package proxy

// Capped results, nothing lost: a result too long for the model reaches a
// real client cut, with a link to the whole, which the caller (and only
// the caller) reads back byte for byte; a plan's references see the whole.

import (
	"cmp"
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcp-router/mcp-router/audit"
	"github.com/mcp-router/mcp-router/internal/fakeupstream"
	"github.com/mcp-router/mcp-router/proxy/frontdoor"
	"github.com/mcp-router/mcp-router/proxy/results"
)

// longText is n bytes or more of numbered lines with two- and three-byte
// characters, so that a cut can fall inside a line and inside a character.
func longText(n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "line %06d: héllo wörld ✓ %s\n", i, strings.Repeat("é", i%7))
	}
	return b.String()
}

// capUpstream serves long (the text of its dump tool), a count tool that
// says how many bytes its text argument has, and a structured tool whose
// structured content is long.
func capUpstream(t *testing.T, long string) UpstreamConfig {
	t.Helper()
	srv := fakeupstream.New("cap")
	srv.AddTool(mcp.NewTool("dump"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText(long), nil
	})
	srv.AddTool(mcp.NewTool("count", mcp.WithString("text")), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText(fmt.Sprintf("counted %d", len(req.GetString("text", "")))), nil
	})
	srv.AddTool(mcp.NewTool("rows"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultStructured(map[string]any{"rows": strings.Split(long, "\n")}, "the rows"), nil
	})
	ts := httptest.NewServer(server.NewStreamableHTTPServer(srv))
	t.Cleanup(ts.Close)
	return UpstreamConfig{Name: "cap", Transport: TransportStreamableHTTP, URL: ts.URL + "/mcp", Prefix: "cap_"}
}

// sizes keeps the response size of each audit record by tool.
type sizes struct {
	mu sync.Mutex
	by map[string]int
}

func (s *sizes) Record(r audit.Record) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.by[r.Tool] = r.ResponseBytes
}

func (s *sizes) of(tool string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.by[tool]
}

// capGateway is a gateway over HTTP with two principals' tokens, in front
// of capUpstream; each of set changes its options first.
func capGateway(t *testing.T, long string, set ...func(*Options)) string {
	t.Helper()
	opts := Options{Upstreams: []UpstreamConfig{capUpstream(t, long)}, Builtin: fakeBuiltins}
	for _, f := range set {
		f(&opts)
	}
	hub := startHubWith(t, opts)
	srv := NewServer(ServerOptions{Hub: hub})
	t.Cleanup(srv.Close)
	ts := httptest.NewServer(frontdoor.Guard(srv.HTTPHandler(), frontdoor.Options{BearerTokens: []string{"token-a", "token-b"}}))
	t.Cleanup(ts.Close)
	return ts.URL + "/mcp"
}

func TestLongResultReachesTheModelCutAndTheCallerReadsItWhole(t *testing.T) {
	long := longText(1 << 20)
	audited := &sizes{by: map[string]int{}}
	url := capGateway(t, long, func(o *Options) { o.Audit = audited })
	a, b := connectMCPGoPrincipal(t, url, "token-a"), connectMCPGoPrincipal(t, url, "token-b")

	res := callMCPGo(t, a, "cap_dump", nil)
	cut, link := cutAndLink(t, res)
	if len(cut) > DefaultModelResultBytes || !strings.HasSuffix(cut, "\n") || !strings.HasPrefix(long, cut) {
		t.Fatalf("the model got %d bytes ending %q; want at most %d, a prefix of the result ending at a line",
			len(cut), cut[max(0, len(cut)-20):], DefaultModelResultBytes)
	}
	if got := audited.of("cap_dump"); got < len(long) {
		t.Errorf("the audit record holds a result of %d bytes, want the true size (%d or more), not the cut", got, len(long))
	}
	if note := allText(res); !strings.Contains(note, fmt.Sprintf("%d bytes", len(long))) || !strings.Contains(note, "read_result") {
		t.Errorf("the note does not say how large the result was and how to read on: %.400s", note[len(cut):])
	}

	if got := readResource(t, a, link); got != long {
		t.Errorf("resources/read of %s: got %d bytes, want the %d of the result, byte for byte", link, len(got), len(long))
	}
	if got := readPages(t, a, link); got != long {
		t.Errorf("read_result's pages joined: got %d bytes, want the %d of the result, byte for byte", len(got), len(long))
	}
	rest := readResource(t, a, fmt.Sprintf("%s?offset=%d", link, len(cut)))
	if cut+rest != long {
		t.Errorf("resources/read from the cut's end: got %d bytes, want the other %d", len(rest), len(long)-len(cut))
	}

	req := mcp.ReadResourceRequest{}
	req.Params.URI = link
	if _, err := b.c.ReadResource(t.Context(), req); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("another principal's resources/read: got %v, want not found", err)
	}
	if res := callMCPGo(t, b, "read_result", map[string]any{"uri": link}); !res.IsError || strings.Contains(allText(res), long[:100]) {
		t.Errorf("another principal's read_result: got %.200s, want an error", allText(res))
	}
}

func TestKeptResultsBoundEvictsOldestFirst(t *testing.T) {
	long := longText(100 << 10)
	url := capGateway(t, long, func(o *Options) { o.KeptResults = results.Options{PerPrincipal: 2*len(long) + 1} })
	a := connectMCPGoPrincipal(t, url, "token-a")
	var links []string
	for range 3 {
		_, link := cutAndLink(t, callMCPGo(t, a, "cap_dump", nil))
		links = append(links, link)
	}
	req := mcp.ReadResourceRequest{}
	req.Params.URI = links[0]
	if _, err := a.c.ReadResource(t.Context(), req); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("the oldest of three results under a bound of two: got %v, want not found", err)
	}
	for _, link := range links[1:] {
		if got := readResource(t, a, link); got != long {
			t.Errorf("resources/read of the newer %s: got %d bytes, want the %d of the result", link, len(got), len(long))
		}
	}
}

func TestLongStructuredContentIsKeptNotPassed(t *testing.T) {
	long := longText(200 << 10)
	a := connectMCPGoPrincipal(t, capGateway(t, long), "token-a")
	res := callMCPGo(t, a, "cap_rows", nil)
	if res.StructuredContent != nil {
		t.Fatal("structured content over the bound reached the model")
	}
	_, link := cutAndLink(t, res)
	if got := readResource(t, a, link); !strings.HasPrefix(got, `{"rows":["line 000000`) || len(got) < len(long) {
		t.Errorf("the kept structured content: got %.60s… (%d bytes)", got, len(got))
	}
}

func TestPlanReferencesSeeTheWholeResult(t *testing.T) {
	long := longText(200 << 10)
	a := connectMCPGoPrincipal(t, capGateway(t, long), "token-a")
	plan := map[string]any{"steps": []any{
		map[string]any{"id": "d", "tool": "cap_dump", "args": map[string]any{}},
		map[string]any{"id": "n", "tool": "cap_count", "args": map[string]any{"text": "$<<d>>"}},
	}}
	res := callMCPGo(t, a, "run_plan", plan)
	cut, link := cutAndLink(t, res) // the plan's answer holds the whole dump: it reaches the model cut too
	if len(cut) > DefaultModelResultBytes {
		t.Errorf("the plan's answer reached the model with %d bytes of text, over the bound", len(cut))
	}
	if want := fmt.Sprintf("counted %d", len(long)); !strings.Contains(readResource(t, a, link), want) {
		t.Errorf("the plan's second step saw a cut result: want %q in its answer", want)
	}
}

func callMCPGo(t *testing.T, p *mcpgoPrincipal, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	req := mcp.CallToolRequest{}
	req.Params.Name, req.Params.Arguments = name, args
	res, err := p.c.CallTool(t.Context(), req)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

// cutAndLink is the text a cut result shows first, and its link to the
// whole.
func cutAndLink(t *testing.T, res *mcp.CallToolResult) (string, string) {
	t.Helper()
	var link string
	for _, c := range res.Content {
		if l, ok := c.(mcp.ResourceLink); ok {
			link = l.URI
		}
	}
	if !strings.HasPrefix(link, results.Scheme) {
		t.Fatalf("no resource_link to %s… in %.300s", results.Scheme, allText(res))
	}
	text, _ := res.Content[0].(mcp.TextContent)
	if !utf8.ValidString(text.Text) {
		t.Fatal("the cut split a character")
	}
	return text.Text, link
}

func readResource(t *testing.T, p *mcpgoPrincipal, uri string) string {
	t.Helper()
	req := mcp.ReadResourceRequest{}
	req.Params.URI = uri
	res, err := p.c.ReadResource(t.Context(), req)
	if err != nil {
		t.Fatalf("resources/read %s: %v", uri, err)
	}
	var b strings.Builder
	for _, c := range res.Contents {
		tc, _ := c.(mcp.TextResourceContents)
		b.WriteString(tc.Text)
	}
	return b.String()
}

// readPages reads uri with read_result from its start to its end.
func readPages(t *testing.T, p *mcpgoPrincipal, uri string) string {
	t.Helper()
	var b strings.Builder
	for offset, pages := 0, 0; ; pages++ {
		res := callMCPGo(t, p, "read_result", map[string]any{"uri": uri, "offset": offset})
		sc, _ := res.StructuredContent.(map[string]any)
		if res.IsError || sc == nil || pages > 100 {
			t.Fatalf("read_result at %d: %.300s", offset, allText(res))
		}
		page, _ := res.Content[0].(mcp.TextContent)
		b.WriteString(page.Text)
		next, total := int(sc["next_offset"].(float64)), int(sc["total"].(float64))
		if next >= total {
			return b.String()
		}
		offset = next
	}
}

// Over stdio and HTTP, in both protocol eras, a long result reached
// through call_tool is cut for the model and read back whole, by
// resources/read and by read_result.
func TestLongResultThroughCallToolInBothEras(t *testing.T) {
	const n = 200_000
	for _, tr := range []string{"stdio", "http"} {
		for _, version := range []string{"", "2025-11-25"} {
			t.Run(tr+" "+cmp.Or(version, "newest"), func(t *testing.T) {
				c := connectEra(t, erasServer(t), tr, version)
				if v := c.ProtocolVersion(); v != cmp.Or(version, mcp.ProtocolVersion20260728) {
					t.Fatalf("negotiated %q, want %q", v, cmp.Or(version, mcp.ProtocolVersion20260728))
				}
				res := c.call(t, "call_tool", map[string]any{"name": "alpha_big", "arguments": map[string]any{"bytes": n}})
				cut, link := cutAndLink(t, res)
				if len(cut) > DefaultModelResultBytes {
					t.Fatalf("the model got %d bytes, want at most %d", len(cut), DefaultModelResultBytes)
				}
				p := &mcpgoPrincipal{c: c.Client}
				if got := readResource(t, p, link); got != strings.Repeat("x", n) {
					t.Errorf("resources/read: got %d bytes, want the %d of the result", len(got), n)
				}
				if got := readPages(t, p, link); got != strings.Repeat("x", n) {
					t.Errorf("read_result: got %d bytes, want the %d of the result", len(got), n)
				}
			})
		}
	}
}
