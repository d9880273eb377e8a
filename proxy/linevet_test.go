package proxy

import (
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
)

// A stdio upstream's lines, checked one by one (FI-09).

// vetLines runs lines through a lineVet while the requests with ids
// 1 and 2 wait, and returns what mcp-go would read and how many
// violations were counted.
func vetLines(t *testing.T, lines ...string) (string, int) {
	t.Helper()
	pending := &pendingIDs{}
	var sent strings.Builder
	tap := stdinTap{w: nopWriteCloser{&sent}, pending: pending}
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
	v := newLineVet(strings.NewReader(strings.Join(lines, "\n")+"\n"), pending,
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

// describe renders a line lineVet handed on: an error response it put in
// place of a broken one is "error <id>".
func describe(line string) string {
	var m struct {
		ID    json.RawMessage `json:"id"`
		Error *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal([]byte(line), &m) == nil && m.Error != nil && protocolReply(errors.New(m.Error.Message)) != nil {
		return "error " + string(m.ID)
	}
	return line
}
