package proxy

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcp-router/mcp-router/proxy/metatools"
	"github.com/mcp-router/mcp-router/routing"
)

// request_more_tools shows each tool as a signature (required parameters
// with their types) without its schema; describe_tools gives the schema,
// names what is not in the catalog, and refuses bad input with a clear
// error.
func TestDescribeToolsGivesFullSchemasDiscoveryStaysCompact(t *testing.T) {
	for _, tr := range routedTransports {
		t.Run(tr.name, func(t *testing.T) {
			c, _, _ := routed(t, tr.connect)
			found := resultText(c.call(t, "request_more_tools", map[string]any{"query": "echo the text back", "tools": []any{"beta_echo"}}))
			if !strings.Contains(found, "- beta_echo(text: string): Echo the text back (server beta") || strings.Contains(found, "input schema:") {
				t.Errorf("request_more_tools text should show beta_echo as a compact signature, no schema:\n%s", found)
			}
			res := c.call(t, "describe_tools", map[string]any{"tools": []any{"beta_echo", "nobody_tool"}})
			text := resultText(res)
			if res.IsError || !strings.Contains(text, `input schema: {"properties":{"text":{"type":"string"}},"required":["text"],"type":"object"}`) ||
				!strings.Contains(text, "Not in the catalog: nobody_tool") {
				t.Errorf("describe_tools: isError %v, text:\n%s", res.IsError, text)
			}
			var got struct {
				Tools []struct {
					Name        string
					InputSchema map[string]any `json:"input_schema"`
				}
				Unknown []string
			}
			b, _ := json.Marshal(res.StructuredContent)
			if err := json.Unmarshal(b, &got); err != nil || len(got.Tools) != 1 || got.Tools[0].InputSchema["required"] == nil ||
				len(got.Unknown) != 1 {
				t.Errorf("describe_tools structuredContent %s (%v): want beta_echo with its schema and nobody_tool unknown", b, err)
			}
			for name, args := range map[string]map[string]any{
				"no tools":     {},
				"not a list":   {"tools": "beta_echo"},
				"not a name":   {"tools": []any{"has space"}},
				"too many":     {"tools": manyNames(20 + 1)},
				"only unknown": {"tools": []any{"nobody_tool"}},
			} {
				if res := c.call(t, "describe_tools", args); !res.IsError {
					t.Errorf("describe_tools with %s: %q, want an error", name, resultText(res))
				}
			}
		})
	}
}

func manyNames(n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = fmt.Sprintf("tool_%d", i)
	}
	return out
}

// A call whose arguments violate the tool's schema gets the schema in its
// error, so the model can fix them without another round trip.
func TestWrongArgumentsErrorCarriesTheSchema(t *testing.T) {
	alpha := builtinFake("alpha")
	alpha.ValidateArguments = true
	c := overStdioWith(t, ServerOptions{Hub: startHub(t, alpha)})
	res := c.call(t, "alpha_echo", map[string]any{"text": 5})
	text := resultText(res)
	if !res.IsError || !strings.Contains(text, "input schema:") || !strings.Contains(text, `"required":["text"]`) {
		t.Errorf("a call with a number for text: isError %v, text %q, want the error with alpha_echo's schema", res.IsError, text)
	}
	if res := c.call(t, "alpha_echo", map[string]any{"text": "fine"}); res.IsError {
		t.Errorf("a good call: %q", resultText(res))
	}
}

// seedTools reads the routing seed catalog: real tool definitions of the
// calculator, filesystem, memory, docs and web servers.
func seedTools(t testing.TB) []mcp.Tool {
	t.Helper()
	f, err := os.Open("../routing/testdata/seed_catalog.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var tools []mcp.Tool
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var line struct {
			Name, Description string
			InputSchema       json.RawMessage `json:"input_schema"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatal(err)
		}
		tools = append(tools, mcp.Tool{Name: line.Name, Description: line.Description, RawInputSchema: line.InputSchema})
	}
	return tools
}

// The tokens of one request_more_tools answer on a 500-tool catalog,
// compact against full schemas, and the number of discoveries after which
// listing every tool would have been cheaper. Tokens are estimated as
// bytes/4. The catalog is the seed catalog's 43 real definitions served by
// 12 upstreams (500 tools), each copy's description naming its set so that
// the copies are distinct tools, not instances of one server.
func TestCompactDiscoveryTokens(t *testing.T) {
	seed := seedTools(t)
	const n = 500
	var ups []UpstreamConfig
	for i := 0; i*len(seed) < n; i++ {
		ups = append(ups, UpstreamConfig{Name: fmt.Sprintf("set%02d", i), Transport: TransportBuiltin, Builtin: "seed",
			Args: []string{fmt.Sprint(min(len(seed), n-i*len(seed))), fmt.Sprint(i)}, Prefix: fmt.Sprintf("s%02d_", i)})
	}
	h := startHubWith(t, Options{Upstreams: ups, Builtin: func(_ string, args []string) (*server.MCPServer, error) {
		var k, set int
		fmt.Sscan(args[0], &k)
		fmt.Sscan(args[1], &set)
		srv := server.NewMCPServer("seed", "1")
		for _, tool := range seed[:k] {
			tool.Description += fmt.Sprintf(" Works on project %d.", set)
			srv.AddTool(tool, func(_ context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return mcp.NewToolResultText("ok"), nil
			})
		}
		return srv, nil
	}})
	if got := len(h.Catalog().Tools); got != n {
		t.Fatalf("catalog of %d tools, want %d", got, n)
	}
	router := routing.NewRouter(routing.RouterOptions{})
	c := overStdioWith(t, ServerOptions{Hub: h, Router: router, Session: routing.SessionOptions{MaxDiscoveries: 100, ResetAfter: time.Hour}})
	everything := overStdioWith(t, ServerOptions{Hub: h})

	belt, err := c.session.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	all, err := everything.session.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	listAll, listBelt := tokens(all.Tools), tokens(belt.Tools)

	var compact, full, request int
	queries := []string{"read a file from disk", "add two numbers", "create an entity in the knowledge graph", "fetch a web page as text"}
	for _, q := range queries {
		args := map[string]any{"query": q}
		res := c.call(t, "request_more_tools", args)
		var d struct {
			Tools   []routedTool
			Alerts  []routing.Alert
			Unknown []string
		}
		b, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(b, &d); err != nil || len(d.Tools) == 0 {
			t.Fatalf("request_more_tools %q: %s (%v)", q, b, err)
		}
		if q == queries[0] {
			t.Logf("compact answer to %q:\n%s", q, resultText(res))
		}
		compact += len(resultText(res)) / 4
		full += len(fullDiscovery(d.Alerts, d.Tools, d.Unknown)) / 4
		request += tokens(map[string]any{"name": "request_more_tools", "arguments": args})
	}
	compact, full, request = compact/len(queries), full/len(queries), request/len(queries)
	breakEven := func(answer int) int { return (listAll - listBelt + answer + request - 1) / (answer + request) }
	t.Logf("500-tool catalog, tokens as bytes/4: tools/list of every tool %d, of the belt %d", listAll, listBelt)
	t.Logf("one request_more_tools answer (mean of %d queries): compact %d, full %d (%.1fx); request %d", len(queries), compact, full, float64(full)/float64(compact), request)
	t.Logf("listing everything is cheaper after %d discoveries with compact answers, %d with full ones", breakEven(compact), breakEven(full))
	if compact*2 > full {
		t.Errorf("compact answer %d tokens against full %d: want at most half", compact, full)
	}
	if breakEven(compact) <= breakEven(full) {
		t.Errorf("break-even after %d compact discoveries, %d full: compact should last longer", breakEven(compact), breakEven(full))
	}
}

// routedTool is a tool in the structuredContent of request_more_tools.
type routedTool struct {
	Name         string          `json:"name"`
	Upstream     string          `json:"upstream"`
	Domain       string          `json:"domain"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"input_schema"`
	Server       string          `json:"server_description,omitempty"`
	Alternatives []struct {
		Name, Upstream string
	} `json:"alternatives,omitempty"`
}

// fullDiscovery is a discovery's answer with each tool's whole input
// schema, as describe_tools shows it.
func fullDiscovery(alerts []routing.Alert, tools []routedTool, unknown []string) string {
	var b strings.Builder
	for _, a := range alerts {
		b.WriteString(a.Message + "\n\n")
	}
	for _, t := range tools {
		b.WriteString(metatools.FullText(metatools.Tool{Name: t.Name, Upstream: t.Upstream, Server: t.Server,
			Def: mcp.Tool{Description: t.Description, RawInputSchema: t.InputSchema}}))
	}
	if len(unknown) > 0 {
		fmt.Fprintf(&b, "\nNot in the catalog: %s.\n", strings.Join(unknown, ", "))
	}
	return b.String()
}

// tokens estimates the tokens of v's JSON as bytes/4.
func tokens(v any) int {
	b, _ := json.Marshal(v)
	return len(b) / 4
}
