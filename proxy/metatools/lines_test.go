package metatools

import (
	"encoding/json"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-router/mcp-router/routing"
)

// TestRoutedToolsAppendJSON checks that the tools kept JSON writes them
// byte for byte as json.Marshal does, and gives way where it cannot.
func TestRoutedToolsAppendJSON(t *testing.T) {
	var l lines
	routed := func(name, upstream, desc, server string, schema json.RawMessage, score float64) routedTool {
		c := routing.Candidate{Name: name, Upstream: upstream, Domain: upstream + "-domain", Score: score}
		def := mcp.Tool{Name: name, Description: desc, RawInputSchema: schema}
		line := l.of(c, Tool{Name: name, Upstream: upstream, Server: server, Def: def})
		return routedTool{Name: name, Upstream: upstream, Domain: c.Domain, Score: score, Description: desc,
			InputSchema: schema, Signature: line.signature, Server: server, line: line}
	}
	plain := routed("a_read", "a", "Read a file.", "", json.RawMessage(`{"type":"object","required":["path"]}`), 0.87)
	html := routed("b_tag", "b<&>", "Tags <b> & \u2028 \"quotes\"\n", "the <b> server",
		json.RawMessage("{ \"type\" : \"object\",\n \"properties\": {\"x\": {\"type\": \"string\", \"pattern\": \"<a>\"}}}"), 0.35)
	down := html
	down.Unavailable, down.Alternatives = "down", []alternative{{Name: "c_tag", Upstream: "c", Server: "<c>"}}
	zero := routed("z_zero", "z", "", "", nil, 0)
	negative := plain
	negative.Score = -0.25
	for _, tc := range []struct {
		name   string
		tools  routedTools
		wantOK bool
	}{
		{"none", routedTools{}, true},
		{"plain", routedTools{plain}, true},
		{"html, white space and line separators", routedTools{plain, html}, true},
		{"down with alternatives", routedTools{down, plain}, true},
		{"zero score, no schema", routedTools{zero}, true},
		{"negative score", routedTools{negative}, true},
		{"tiny score, written with an exponent", routedTools{{Name: "t", Score: 1e-7, line: plain.line}}, false},
		{"no line", routedTools{{Name: "t", Score: 0.5}}, false},
	} {
		got, ok := tc.tools.AppendJSON([]byte("prefix:"))
		if ok != tc.wantOK {
			t.Errorf("%s: ok %v, want %v", tc.name, ok, tc.wantOK)
			continue
		}
		want, err := json.Marshal([]routedTool(tc.tools))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if ok && string(got) != "prefix:"+string(want) {
			t.Errorf("%s:\ngot  %s\nwant prefix:%s", tc.name, got, want)
		}
	}
}

// TestLinesFollowTheDefinition checks that a kept line is read again when
// the tool's definition changes.
func TestLinesFollowTheDefinition(t *testing.T) {
	var l lines
	c := routing.Candidate{Name: "a_read", Upstream: "a", Domain: "a"}
	tool := Tool{Name: "a_read", Upstream: "a", Def: mcp.Tool{Name: "a_read", Description: "Read a file.",
		RawInputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)}}
	if got := l.of(c, tool); got.signature != "a_read(path: string)" || l.of(c, tool) != got {
		t.Fatalf("signature %q, or not kept", got.signature)
	}
	tool.Def.RawInputSchema = json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`)
	if got := l.of(c, tool).signature; got != "a_read(n: integer)" {
		t.Errorf("after a schema change: signature %q, want a_read(n: integer)", got)
	}
	tool.Def.Description = "Read a file. Then more."
	if got := l.of(c, tool).sentence; got != "Read a file." {
		t.Errorf("after a description change: sentence %q, want Read a file.", got)
	}
	tool.Server = "files on disk"
	if got := l.of(c, tool).aboutIt; got != ": files on disk" {
		t.Errorf("after a server change: %q, want \": files on disk\"", got)
	}
}

// BenchmarkRoutedToolsJSON compares writing five routed tools from the
// JSON kept per tool with json.Marshal, which the answer used before.
//
//	go test -run '^$' -bench BenchmarkRoutedToolsJSON ./proxy/metatools/
func BenchmarkRoutedToolsJSON(b *testing.B) {
	var l lines
	schema := json.RawMessage(`{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "Where the file is, relative to the workspace root."},
    "encoding": {"type": "string", "enum": ["utf-8", "latin-1"], "description": "How the bytes are text."},
    "offset": {"type": "integer", "minimum": 0, "description": "Where to start reading, in bytes."},
    "limit": {"type": "integer", "minimum": 1, "description": "How many bytes to read at most."}
  },
  "required": ["path"]
}`)
	var tools routedTools
	for _, name := range []string{"files_read", "files_head", "files_tail", "disk_read", "blob_read"} {
		c := routing.Candidate{Name: name, Upstream: "files", Domain: "files", Score: 0.42}
		line := l.of(c, Tool{Name: name, Upstream: "files", Server: "Files on the local disk.",
			Def: mcp.Tool{Name: name, Description: "Read a text file from disk. It returns its contents.", RawInputSchema: schema}})
		tools = append(tools, routedTool{Name: name, Upstream: "files", Domain: "files", Score: 0.42,
			Description: "Read a text file from disk. It returns its contents.", InputSchema: schema,
			Signature: line.signature, Server: "Files on the local disk.", line: line})
	}
	buf := make([]byte, 0, 1024)
	b.Run("append", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			buf, _ = tools.AppendJSON(buf[:0])
		}
	})
	b.Run("marshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			out, _ := json.Marshal([]routedTool(tools))
			buf = append(buf[:0], out...)
		}
	})
}
