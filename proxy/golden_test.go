package proxy

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/mcp-router/mcp-router/internal/fakeollama"
	"github.com/mcp-router/mcp-router/routing"
)

// update rewrites the golden transcripts under testdata/transcripts from
// what the gateway answers now: go test -run TestMetaToolTranscripts -update ./proxy
var update = flag.Bool("update", false, "rewrite the golden transcripts in testdata/transcripts")

// transcriptVolatile are the members whose values change from run to run
// (durations, minted handles, a lesson's times); a transcript shows them
// as "<volatile>".
var transcriptVolatile = regexp.MustCompile(`"(handle|took_ms|dur_ms|duration_ms|elapsed_ms|created|last_used)":\s*("[^"]*"|[0-9.e+-]+)`)

// transcriptLongFloat is a number with more fraction digits than a
// person wrote: a computed float, whose last digits may differ where the
// compiler fuses a multiply and an add (arm64 does, amd64 does not). A
// transcript shows it to 12 significant digits.
var transcriptLongFloat = regexp.MustCompile(`-?[0-9]+\.[0-9]{13,}`)

// transcriptPlan is the fake model's answer to every plan request of the
// transcripts: echo the text, then echo the first echo's text again.
const transcriptPlan = `{"decision":"USE_TOOL","confidence":0.9,"reasoning":"echo it, then echo the echo",` +
	`"plan":{"steps":[{"id":"a","tool":"alpha_echo","args":{"text":"hello"}},` +
	`{"id":"b","tool":"alpha_echo","args":{"text":"$<<a.text>> again"}}]}}`

// The meta-tools answer as their golden transcripts say: each request
// sent over stdio to a routed gateway that plans (with a fake model) and
// learns (lessons in a file of the test's), with its response, as
// JSON-RPC.
func TestMetaToolTranscripts(t *testing.T) {
	mem := fileLessons(t)
	plans := fakePlanner(t, func(fakeollama.ChatRequest) (string, error) { return transcriptPlan, nil })
	h := startHub(t, builtinFake("alpha"), builtinFake("beta"))
	srv := NewServer(ServerOptions{Hub: h, Router: routing.NewRouter(routing.RouterOptions{Lessons: mem}),
		Planner: plans, Lessons: mem,
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
		{"plan", map[string]any{"query": "echo hello, then echo that again"}},
		{"plan", map[string]any{"query": "echo hello, then echo that again", "execute": true}},
		{"plan", map[string]any{"query": "  "}},
		{"routing_feedback", map[string]any{"query": "echo some text back", "wrong_tool": "alpha_echo", "right_tool": "beta_echo",
			"note": "the user meant beta"}},
		{"routing_feedback", map[string]any{"query": "echo some text back", "right_tool": "nope_tool"}},
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
// document a line, with the volatile values masked and the long floats
// rounded.
func writeExchange(t *testing.T, out *bytes.Buffer, req, resp string) {
	t.Helper()
	for _, msg := range []string{req, resp} {
		var compact bytes.Buffer
		if err := json.Compact(&compact, []byte(msg)); err != nil {
			t.Fatalf("%.200s: %v", msg, err)
		}
		masked := transcriptVolatile.ReplaceAll(compact.Bytes(), []byte(`"$1":"<volatile>"`))
		out.Write(transcriptLongFloat.ReplaceAllFunc(masked, func(num []byte) []byte {
			v, err := strconv.ParseFloat(string(num), 64)
			if err != nil {
				return num
			}
			return strconv.AppendFloat(nil, v, 'g', 12, 64)
		}))
		out.WriteByte('\n')
	}
}
