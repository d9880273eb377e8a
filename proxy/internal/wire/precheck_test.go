package wire

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/mcp"
)

// The scanner accepts exactly what encoding/json accepts, up to its depth.
func TestScanJSONAgreesWithEncodingJSON(t *testing.T) {
	inputs := []string{
		`{}`, `[]`, `0`, `-0`, `-0.5e+10`, `1E5`, `"x"`, `true`, `false`, `null`, ` {"a" : [1, {"b":null}] } `,
		`{"a":"\u00e9\n\"\\\/"}`, "\"a\xffb\"", `{"a":1,"a":2}`, `[[],{},[{}]]`, "\t\r\n[1]\n",
		``, ` `, `{`, `}`, `[1,]`, `{"a":1,}`, `{"a"}`, `{"a":}`, `{1:2}`, `[1 2]`, `01`, `1.`, `.5`, `-`, `1e`, `+1`,
		`tru`, `nul`, `"abc`, `"\x"`, `"\u12"`, `"\u12G4"`, "\"a\x01b\"", "\"a\x00b\"", `{"a":1} x`, `[1]]`, `{]`, `[}`,
		`{"a":1}{"b":2}`, `NaN`, `Infinity`, `'a'`, "\xef\xbb\xbf{}",
	}
	for _, in := range inputs {
		_, err := scanJSON([]byte(in))
		if got, want := err == nil, json.Valid([]byte(in)); got != want {
			t.Errorf("scanJSON(%q): got valid %v (%v), want %v", in, got, err, want)
		}
	}
}

func TestScanJSONDepth(t *testing.T) {
	objects := func(depth int) string { return strings.Repeat(`{"a":`, depth-1) + `{}` + strings.Repeat(`}`, depth-1) }
	for _, tc := range []struct {
		name string
		json string
		ok   bool
	}{
		{"arrays 64", nested(64), true},
		{"arrays 65", nested(65), false},
		{"objects 64", objects(64), true},
		{"objects 65", objects(65), false},
		{"mixed 65", `{"a":` + nested(64) + `}`, false},
		{"arrays 10000", nested(10000), false},
		{"arrays 1M, unclosed", strings.Repeat("[", 1<<20), false},
	} {
		_, err := scanJSON([]byte(tc.json))
		if tc.ok != (err == nil) || (!tc.ok && !errors.Is(err, errTooDeep)) {
			t.Errorf("%s: got %v, want ok=%v or errTooDeep", tc.name, err, tc.ok)
		}
	}
}

// The members kept are the top-level ones, values whole, whatever nests.
func TestScanJSONMembers(t *testing.T) {
	msg := `{"jsonrpc":"2.0", "params":{"id":7,"method":"x","a":[{"result":1}]}, "other":[1,{"id":2}], "id" : "k", "method":"m"}`
	sc, err := scanJSON([]byte(msg))
	if err != nil {
		t.Fatal(err)
	}
	env, err := envelopeOf(&sc)
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprintf("%s|%s|%s|%s|%s|%s", env.jsonrpc, env.id, env.method, env.params, env.result, env.error)
	want := `"2.0"|"k"|"m"|{"id":7,"method":"x","a":[{"result":1}]}||`
	if got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

func TestPrecheck(t *testing.T) {
	const pass, drop = 0, 1
	cases := []struct {
		name, msg string
		code      int    // pass, drop or the error code
		id        string // the id the error echoes
	}{
		{"request", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}`, pass, ""},
		{"notification", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, pass, ""},
		{"response", `{"jsonrpc":"2.0","id":3,"result":{}}`, pass, ""},
		{"error response", `{"jsonrpc":"2.0","id":"s","error":{"code":1,"message":"no"}}`, pass, ""},
		{"params null", `{"jsonrpc":"2.0","id":1,"method":"ping","params":null}`, pass, ""},
		{"escaped names", `{"\u006asonrpc":"2.0","\u0069d":1,"method":"ping"}`, pass, ""},
		{"other members", `{"jsonrpc":"2.0","id":1,"method":"ping","x":1,"y":2,"z":3,"w":4,"v":5,"u":6,"t":7,"s":8}`, pass, ""},
		{"cancel", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"a"}}`, pass, ""},

		{"server/discover", `{"jsonrpc":"2.0","id":7,"method":"server/discover","params":{}}`, pass, ""},
		{"not JSON", `{not json`, mcp.PARSE_ERROR, "null"},
		{"trailing data", `{"jsonrpc":"2.0","id":1,"method":"ping"} x`, mcp.PARSE_ERROR, "null"},
		{"too deep", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"a":` + nested(63) + `}}`, mcp.PARSE_ERROR, "null"},
		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, mcp.INVALID_REQUEST, "null"},
		{"scalar", `"ping"`, mcp.INVALID_REQUEST, "null"},
		{"id null", `{"jsonrpc":"2.0","id":null,"method":"ping"}`, mcp.INVALID_REQUEST, "null"},
		{"id object", `{"jsonrpc":"2.0","id":{},"method":"ping"}`, mcp.INVALID_REQUEST, "null"},
		{"id twice", `{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}`, mcp.INVALID_REQUEST, "null"},
		{"ID", `{"jsonrpc":"2.0","id":1,"ID":2,"method":"ping"}`, mcp.INVALID_REQUEST, "null"},
		{"folded long s", "{\"j\u017fonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}", mcp.INVALID_REQUEST, "null"},
		{"no jsonrpc", `{"id":2,"method":"ping"}`, mcp.INVALID_REQUEST, "2"},
		{"jsonrpc 1.0", `{"jsonrpc":"1.0","id":"x","method":"ping"}`, mcp.INVALID_REQUEST, `"x"`},
		{"method a number", `{"jsonrpc":"2.0","id":4,"method":5}`, mcp.INVALID_REQUEST, "4"},
		{"params an array", `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":["x"]}`, mcp.INVALID_REQUEST, "5"},
		{"request with result", `{"jsonrpc":"2.0","id":6,"method":"ping","result":{}}`, mcp.INVALID_REQUEST, "6"},
		{"no method", `{"jsonrpc":"2.0","id":7}`, mcp.INVALID_REQUEST, "7"},
		{"empty object", `{}`, mcp.INVALID_REQUEST, "null"},
		{"id re-encoded", "{\"jsonrpc\":\"1\",\"id\":\"a\\u00e9\xff\",\"method\":\"ping\"}", mcp.INVALID_REQUEST, "\"aé\uFFFD\""},

		{"notification params a string", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":"garbage"}`, drop, ""},
		{"notification bad jsonrpc", `{"jsonrpc":"1.0","method":"notifications/initialized"}`, drop, ""},
		{"cancel id an object", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":{}}}`, drop, ""},
		{"cancel without params", `{"jsonrpc":"2.0","method":"notifications/cancelled"}`, drop, ""},
		{"response id null", `{"jsonrpc":"2.0","id":null,"result":{}}`, drop, ""},
		{"response with both", `{"jsonrpc":"2.0","id":1,"result":{},"error":{}}`, drop, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := precheck([]byte(tc.msg))
			switch tc.code {
			case pass:
				if !v.pass() {
					t.Fatalf("got %+v (%s), want it handed on", v, v.reason)
				}
			case drop:
				if !v.drop {
					t.Fatalf("got %+v (%s), want it dropped", v, v.reason)
				}
			default:
				msg := wantErrorReply(t, v.reply(), tc.code, tc.id)
				if !strings.Contains(msg, ": ") {
					t.Errorf("message %q does not name the problem", msg)
				}
			}
		})
	}
}

// BI-10 over stdio, one message at a time.
func TestHandshake(t *testing.T) {
	var h handshake
	steps := []struct {
		in, out string // a client message, or mcp-go's answer (out)
		want    string // "pass", "drop" or the error message's start
	}{
		{in: `{"jsonrpc":"2.0","id":1,"method":"ping"}`, want: "pass"},
		{in: `{"jsonrpc":"2.0","method":"notifications/initialized"}`, want: "pass"},
		{in: `{"jsonrpc":"2.0","id":1,"result":{}}`, want: "pass"},
		{in: `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, want: `Invalid Request: "tools/list" before initialize`},
		{in: `{"jsonrpc":"2.0","id":"i","method":"initialize","params":{}}`, want: "pass"},
		{in: `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`, want: `Invalid Request: "tools/list" before initialize`},
		{in: `{"jsonrpc":"2.0","id":"i2","method":"initialize","params":{}}`, want: "Invalid Request: initialize was already sent"},
		{in: `{"jsonrpc":"2.0","id":"i","method":"ping"}`, want: `Invalid Request: id "i" is used by initialize`},
		{in: `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"i"}}`, want: "drop"},
		{in: `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"other"}}`, want: "pass"},
		{out: `{"jsonrpc":"2.0","id":"i","error":{"code":-32602,"message":"unsupported version"}}`},
		{in: `{"jsonrpc":"2.0","id":4,"method":"tools/list"}`, want: `Invalid Request: "tools/list" before initialize`},
		{in: `{"jsonrpc":"2.0","id":5,"method":"initialize","params":{}}`, want: "pass"},
		{out: `{"jsonrpc":"2.0","id":1,"method":"sampling/createMessage","params":{}}`}, // not an answer
		{out: `{"jsonrpc":"2.0","id":5.0,"result":{"protocolVersion":"2025-06-18"}}`},
		{in: `{"jsonrpc":"2.0","id":6,"method":"tools/list"}`, want: "pass"},
		{in: `{"jsonrpc":"2.0","id":7,"method":"initialize","params":{}}`, want: "Invalid Request: initialize was already sent"},
		{in: `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5}}`, want: "pass"},
	}
	for i, s := range steps {
		if s.out != "" {
			h.sawOutput([]byte(s.out + "\n"))
			continue
		}
		v := precheck([]byte(s.in))
		if !v.pass() {
			t.Fatalf("step %d: %s does not pass the pre-check: %s", i, s.in, v.reason)
		}
		v = h.admit(v)
		got := "pass"
		switch {
		case v.drop:
			got = "drop"
		case !v.pass():
			got = v.reason
		}
		if !strings.HasPrefix(got, s.want) {
			t.Errorf("step %d, %s: got %q, want %q", i, s.in, got, s.want)
		}
	}
}

// readLine keeps nothing of a line over the limit and finds the next.
func TestReadLineLimit(t *testing.T) {
	in := strings.Repeat("a", 100) + "\n" + "short\n" + strings.Repeat("b", 10) + "\n" + "last"
	var lines []string
	r := bufio.NewReaderSize(strings.NewReader(in), 16)
	for {
		line, tooLong, err := readLine(r, 10, nil)
		switch {
		case tooLong:
			lines = append(lines, fmt.Sprintf("too long (%d kept)", len(line)))
		case len(line) > 0:
			lines = append(lines, string(line))
		}
		if err != nil {
			break
		}
	}
	want := []string{"too long (0 kept)", "short\n", strings.Repeat("b", 10) + "\n", "last"}
	if fmt.Sprint(lines) != fmt.Sprint(want) {
		t.Errorf("got %q, want %q", lines, want)
	}
}

// stdioOut writes each message whole, whichever goroutine writes it.
func TestStdioOutSerialisesWrites(t *testing.T) {
	var buf bytes.Buffer // not safe for concurrent use: -race sees an unserialised Write
	out := NewStdioFilter(nil, &buf, slog.New(slog.DiscardHandler)).out
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 50 {
				msg := fmt.Sprintf(`{"jsonrpc":"2.0","method":"m","params":{"g":%d,"i":%d,"pad":%q}}`+"\n", g, i, strings.Repeat("p", 100*g))
				if g%2 == 0 {
					_, _ = out.Write([]byte(msg))
				} else {
					_, _ = out.write([]byte(msg))
				}
			}
		})
	}
	wg.Wait()
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != 8*50 {
		t.Fatalf("got %d lines, want %d", len(lines), 8*50)
	}
	for _, l := range lines {
		if !json.Valid([]byte(l)) {
			t.Fatalf("an interleaved line: %.100q", l)
		}
	}
}

// The filter hands on what passes, each message its own, answers what it
// refuses on its writer, and says io.EOF when the input ends.
func TestStdioFilterNext(t *testing.T) {
	var out bytes.Buffer
	in := strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}` + "\n" +
		`[1]` + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":"garbage"}` + "\n" +
		`{"jsonrpc":"2.0","id":"s-1","result":{}}` + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" +
		"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools\\/call\",\"params\":{\"name\":\"\xff\"}}") // no final newline
	f := NewStdioFilter(in, &out, slog.New(slog.DiscardHandler))
	var got []string
	var msgs []Message
	for {
		m, err := f.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if m.IsMethod("initialize") { // answered: the handshake lets other requests through
			_, _ = f.Out().Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}` + "\n"))
		}
		msgs = append(msgs, m)
		got = append(got, fmt.Sprintf("%s id=%s response=%v notification=%v call=%v",
			m.Line, m.ID(), m.IsResponse(), m.IsNotification(), m.IsMethod("tools/call")))
	}
	want := []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}} id=1 response=false notification=false call=false`,
		`{"jsonrpc":"2.0","id":"s-1","result":{}} id="s-1" response=true notification=false call=false`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"} id= response=false notification=true call=false`,
		"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools\\/call\",\"params\":{\"name\":\"\uFFFD\"}} id=2 response=false notification=false call=true",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("messages handed on (-want +got):\n%s", diff)
	}
	if len(msgs) == 4 && &msgs[0].Line[0] == &msgs[1].Line[0] {
		t.Error("two messages share a buffer")
	}
	answers := bytes.Split(bytes.TrimSpace(out.Bytes()), []byte("\n"))
	wantErrorReply(t, answers[len(answers)-1], mcp.INVALID_REQUEST, "null") // after the answer to initialize
}

// A request read while initialize is not yet answered waits for that
// answer: handed on after a result, refused after an error.
func TestStdioFilterHoldsARequestUntilInitializeIsAnswered(t *testing.T) {
	for _, answer := range []string{`"result":{}`, `"error":{"code":-32602,"message":"unsupported version"}`} {
		var out bytes.Buffer
		in := strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}` + "\n" +
			`{"jsonrpc":"2.0","id":2,"method":"tools/list"}` + "\n")
		f := NewStdioFilter(in, &out, slog.New(slog.DiscardHandler))
		if m, err := f.Next(); err != nil || !m.IsMethod("initialize") {
			t.Fatalf("first message: %s, %v", m.Line, err)
		}
		next := make(chan string, 1)
		go func() {
			m, err := f.Next()
			next <- fmt.Sprint(string(m.Line), err)
		}()
		select {
		case got := <-next:
			t.Fatalf("before initialize was answered, Next returned %q", got)
		case <-time.After(50 * time.Millisecond):
		}
		_, _ = f.Out().Write([]byte(`{"jsonrpc":"2.0","id":1,` + answer + "}\n"))
		got, want := <-next, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}<nil>`
		if strings.Contains(answer, "error") {
			want = "EOF"
			wantErrorReply(t, bytes.TrimSpace(out.Bytes()[bytes.IndexByte(out.Bytes(), '\n'):]), mcp.INVALID_REQUEST, "2")
		}
		if got != want {
			t.Errorf("after %s: Next returned %q, want %q", answer, got, want)
		}
	}
}

// BenchmarkPrecheck measures the pre-check per message, against
// encoding/json decoding the same message's envelope once (mcp-go does
// that several times per message).
func BenchmarkPrecheck(b *testing.B) {
	small := []byte(`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"alpha_echo",` +
		`"arguments":{"text":"hello","n":[1,2,3],"opts":{"deep":{"er":true}}},"_meta":{"progressToken":"p-42"}}}`)
	large := []byte(`{"jsonrpc":"2.0","id":43,"method":"tools/call","params":{"name":"alpha_echo","arguments":{"text":"` +
		strings.Repeat(`lorem ipsum \"dolor\" sit amet, `, 2048) + `","items":[` + strings.Repeat(`{"k":1.5e3,"v":null},`, 1024) + `0]}}}`)
	for _, m := range []struct {
		name string
		msg  []byte
	}{{"tools_call_small", small}, {"tools_call_64KiB", large}} {
		b.Run(m.name+"/precheck", func(b *testing.B) {
			var h handshake
			h.state = handshakeReady
			b.SetBytes(int64(len(m.msg)))
			b.ReportAllocs()
			for b.Loop() {
				if v := h.admit(precheck(m.msg)); !v.pass() {
					b.Fatal(v.reason)
				}
			}
		})
		b.Run(m.name+"/json_envelope", func(b *testing.B) {
			b.SetBytes(int64(len(m.msg)))
			b.ReportAllocs()
			for b.Loop() {
				var env struct {
					JSONRPC string          `json:"jsonrpc"`
					ID      any             `json:"id"`
					Method  string          `json:"method"`
					Params  json.RawMessage `json:"params"`
				}
				if err := json.Unmarshal(m.msg, &env); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// wantErrorReply checks that reply is a JSON-RPC error with code and id (as
// JSON: `7`, `"x"`, `null`), and returns its message.
func wantErrorReply(t *testing.T, reply []byte, code int, id string) string {
	t.Helper()
	var m struct {
		ID    json.RawMessage `json:"id"`
		Error *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(reply, &m); err != nil {
		t.Fatalf("reply %.200q is not JSON: %v", reply, err)
	}
	if m.Error == nil || m.Error.Code != code || string(m.ID) != id {
		t.Fatalf("got %.300s, want an error with code %d and id %s", reply, code, id)
	}
	return m.Error.Message
}

// nested is depth arrays, one inside the next.
func nested(depth int) string { return strings.Repeat("[", depth) + strings.Repeat("]", depth) }

// A valid message is handed on as it is; a run of invalid bytes becomes one U+FFFD.
func TestInvalidUTF8SanitizeKeepsValidMessages(t *testing.T) {
	ok := []byte(`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"héllo ✓"}}`)
	if got := sanitizeUTF8(ok); &got[0] != &ok[0] {
		t.Error("a valid message was copied, want it returned as it is")
	}
	got := sanitizeUTF8([]byte("{\"a\":\"\xff\xfe\"}"))
	if string(got) != "{\"a\":\"\uFFFD\"}" {
		t.Errorf("got %q, want one U+FFFD for the run", got)
	}
	if !json.Valid(got) {
		t.Errorf("the sanitised message %q is not JSON", got)
	}
}
