package wire

import (
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
)

// A stdio upstream's lines, checked one by one (FI-09).

// vetLines runs lines through a LineVet while the requests with ids
// 1 and 2 wait, and returns what mcp-go would read and how many
// violations were counted.
func vetLines(t *testing.T, lines ...string) (string, int) {
	t.Helper()
	pending := &PendingIDs{}
	var sent strings.Builder
	tap := StdinTap{W: nopWriteCloser{&sent}, Pending: pending}
	for _, req := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a"}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"b"}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"c"}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}`,
	} {
		if _, err := tap.Write([]byte(req + "\n")); err != nil {
			t.Fatal(err)
		}
	}
	violations := 0
	v := NewLineVet(strings.NewReader(strings.Join(lines, "\n")+"\n"), pending,
		func(error, int) { violations++ }, func(int) {})
	got, err := io.ReadAll(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(got), violations
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

func TestLineVet(t *testing.T) {
	good := `{"jsonrpc":"2.0","id":1,"result":{}}`
	note := `{"jsonrpc":"2.0","method":"notifications/progress","params":{}}`
	request := `{"jsonrpc":"2.0","id":"s1","method":"sampling/createMessage","params":{}}`
	for _, tt := range []struct {
		name       string
		lines      []string
		want       []string // lines handed on; a protocol error for id N is "error N"
		violations int
	}{
		{"good lines", []string{good, note, request}, []string{good, note, request}, 0},
		{"(a) not JSON", []string{"hello", good}, []string{good}, 1},
		{"(b) not JSON-RPC", []string{`{"foo":1}`}, nil, 1},
		{"(c) JSON-RPC 1.0 answering a request", []string{`{"jsonrpc":"1.0","id":1,"result":{}}`}, []string{"error 1"}, 1},
		{"(d) both result and error", []string{`{"jsonrpc":"2.0","id":2,"result":{},"error":{"code":1,"message":"x"}}`}, []string{"error 2"}, 1},
		{"(e) unknown id", []string{`{"jsonrpc":"2.0","id":99,"result":{}}`}, nil, 0},
		{"(e) answer after the cancel", []string{`{"jsonrpc":"2.0","id":3,"result":{}}`}, nil, 0},
		{"(f) batch", []string{`[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","id":2,"result":{}},5]`}, []string{"error 1", "error 2"}, 1},
		{"(f) batch answering nothing", []string{`[1, 2, 3]`}, nil, 1},
		{"answered twice", []string{good, good}, []string{good}, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, violations := vetLines(t, tt.lines...)
			var lines []string
			for line := range strings.Lines(got) {
				lines = append(lines, describe(strings.TrimSuffix(line, "\n")))
			}
			if strings.Join(lines, "|") != strings.Join(tt.want, "|") || violations != tt.violations {
				t.Errorf("handed on %q with %d violations, want %q with %d", lines, violations, tt.want, tt.violations)
			}
		})
	}
}

// describe renders a line LineVet handed on: an error response it put in
// place of a broken one is "error <id>".
func describe(line string) string {
	var m struct {
		ID    json.RawMessage `json:"id"`
		Error *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal([]byte(line), &m) == nil && m.Error != nil && ProtocolReply(errors.New(m.Error.Message)) != nil {
		return "error " + string(m.ID)
	}
	return line
}

// The stdio line checks and the HTTP reply checks match the router's own
// string ids as they match mcp-go's integer ones: the answer to a listing
// is handed on, an answer to the integer id of the same digits is not.
func TestReplyChecksAcceptStringIDs(t *testing.T) {
	const id = `"mcp-router/tools/list/7"`
	pending := &PendingIDs{}
	var sent strings.Builder
	tap := StdinTap{W: nopWriteCloser{&sent}, Pending: pending}
	if _, err := tap.Write([]byte(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/list","params":{}}` + "\n")); err != nil {
		t.Fatal(err)
	}
	answer := `{"jsonrpc":"2.0","id":` + id + `,"result":{"tools":[]}}`
	dropped := 0
	v := NewLineVet(strings.NewReader(`{"jsonrpc":"2.0","id":7,"result":{}}`+"\n"+answer+"\n"), pending,
		func(err error, _ int) { t.Errorf("a line refused: %v", err) }, func(int) { dropped++ })
	got, err := io.ReadAll(v)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != answer+"\n" || dropped != 1 {
		t.Errorf("handed on %q (%d dropped), want only the answer to the string id (1 dropped)", got, dropped)
	}
	if err := vetReply([]byte(answer), idKey(json.RawMessage(id))); err != nil {
		t.Errorf("reply guard: %v", err)
	}
	if err := vetReply([]byte(answer), idKey(json.RawMessage(`7`))); err == nil {
		t.Error("reply guard: an answer to the string id taken for the integer id's")
	}
}

// TestFastPathsAllocate checks that the per-call readings of a message
// mcp-go writes or an upstream answers stay single passes: parseMessage
// and declaresStateless allocate nothing, idKey only its key, and
// StdinTap.note only the key it records.
func TestFastPathsAllocate(t *testing.T) {
	call := []byte(`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":3},"_meta":{"progressToken":1}}}` + "\n")
	answer := []byte(`{"jsonrpc":"2.0","id":42,"result":{"content":[{"type":"text","text":"5"}]}}` + "\n")
	params := []byte(`{"name":"add","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}`)
	id := []byte(`"req-7"`)
	pending := &PendingIDs{}
	tap := StdinTap{Pending: pending}
	for _, c := range []struct {
		name string
		max  float64
		f    func()
	}{
		{"parseMessage", 0, func() { _, _ = parseMessage(answer) }},
		{"declaresStateless", 0, func() { _ = declaresStateless(params) }},
		{"idKey", 1, func() { _ = idKey(id) }},
		{"note", 1, func() { tap.note(call); pending.take("int64:42") }},
	} {
		if got := testing.AllocsPerRun(100, c.f); got > c.max {
			t.Errorf("%s: %v allocations, want at most %v", c.name, got, c.max)
		}
	}
	if !declaresStateless(params) {
		t.Error("declaresStateless missed the 2026-07-28 version")
	}
}
