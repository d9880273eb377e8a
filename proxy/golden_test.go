package proxy

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/mcp-router/mcp-router/routing"
)

// update rewrites the golden transcripts under testdata/transcripts from
// what the gateway answers now: go test -run TestMetaToolTranscripts -update ./proxy
var update = flag.Bool("update", false, "rewrite the golden transcripts in testdata/transcripts")

// transcriptVolatile are the members whose values change from run to run
// (durations, minted handles); a transcript shows them as "<volatile>".
var transcriptVolatile = regexp.MustCompile(`"(handle|took_ms|dur_ms|duration_ms|elapsed_ms)":\s*("[^"]*"|[0-9.e+-]+)`)

// The meta-tools answer as their golden transcripts say: each request
// sent over stdio to a routed gateway, with its response, as JSON-RPC.
func TestMetaToolTranscripts(t *testing.T) {
	h := startHub(t, builtinFake("alpha"), builtinFake("beta"))
	srv := NewServer(ServerOptions{Hub: h, Router: routing.NewRouter(routing.RouterOptions{}),
		Session: routing.SessionOptions{MaxDiscoveries: 10, ResetAfter: time.Hour}})
	t.Cleanup(srv.Close)
	c := serveRawStdio(t, srv)
	c.initialize(t, `{}`)
	steps := []struct {
		name string
		args any
	}{
		{"request_more_tools", map[string]any{"query": "echo some text back"}},
		{"describe_tools", map[string]any{"tools": []string{"alpha_echo"}}},
		{"call_tool", map[string]any{"name": "alpha_echo", "arguments": map[string]any{"text": "hello"}}},
		{"call_tool", map[string]any{"name": "alpha_nope", "arguments": map[string]any{}}},
		{"run_plan", map[string]any{"steps": []any{
			map[string]any{"id": "a", "tool": "alpha_echo", "args": map[string]any{"text": "one"}},
			map[string]any{"id": "b", "tool": "beta_echo", "args": map[string]any{"text": "$<<a>> and two"}},
		}}},
	}
	got := map[string]*bytes.Buffer{}
	var order []string
	for i, s := range steps {
		if got[s.name] == nil {
			got[s.name] = &bytes.Buffer{}
			order = append(order, s.name)
		}
		req := toolsCall(t, 100+i, s.name, s.args)
		resp := c.callTool(t, 100+i, s.name, s.args)
		writeExchange(t, got[s.name], req, resp.raw)
	}
	for _, name := range order {
		checkGolden(t, filepath.Join("testdata", "transcripts", name+".jsonl"), got[name].Bytes())
	}
}

// checkGolden compares got with the file at path, or writes it there
// with -update.
func checkGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -run TestMetaToolTranscripts -update ./proxy writes it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("the transcript differs from %s (rerun with -update if the change is meant):\ngot:\n%s\nwant:\n%s", path, got, want)
	}
}

// writeExchange appends a request and its response to out, one JSON
// document a line, with the volatile values masked.
func writeExchange(t *testing.T, out *bytes.Buffer, req, resp string) {
	t.Helper()
	for _, msg := range []string{req, resp} {
		var compact bytes.Buffer
		if err := json.Compact(&compact, []byte(msg)); err != nil {
			t.Fatalf("%.200s: %v", msg, err)
		}
		out.Write(transcriptVolatile.ReplaceAll(compact.Bytes(), []byte(`"$1":"<volatile>"`)))
		out.WriteByte('\n')
	}
}
