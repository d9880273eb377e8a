package wire

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"testing"
)

// FuzzPrecheck checks the client-message pre-check against encoding/json,
// which mcp-go parses with: the scanner accepts exactly what it accepts
// (up to the depth limit), a message handed on has the JSON-RPC members
// encoding/json reads, and every refusal is a JSON-RPC error.
func FuzzPrecheck(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","arguments":{"x":[1,{"y":null}]}}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"a"}}`,
		`{"jsonrpc":"2.0","id":"s","result":{}}`, `{"jsonrpc":"2.0","id":null,"method":"ping"}`,
		`{"\u0069d":1,"ID":2,"jsonrpc":"2.0","method":5}`, "{\"j\u017fonrpc\":\"2.0\"}", `[{"jsonrpc":"2.0"}]`,
		`{"a":"\ud800\u0000"}`, "\"\xff\"", `{"jsonrpc":"2.0","id":1e400,"method":"ping"}`, `-0.0e-0`, `{`, ``,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, msg []byte) {
		_, err := scanJSON(msg)
		if valid := json.Valid(msg); (err == nil) != valid && !(errors.Is(err, errTooDeep) && valid) {
			t.Fatalf("scanJSON: %v, json.Valid: %v", err, valid)
		}
		if errors.Is(err, errTooDeep) && bytes.Count(msg, []byte("["))+bytes.Count(msg, []byte("{")) <= maxJSONDepth {
			t.Fatalf("too deep with at most %d brackets", maxJSONDepth)
		}
		v := precheck(msg)
		if !v.pass() && !v.drop {
			var reply struct {
				ID    json.RawMessage `json:"id"`
				Error struct{ Code int }
			}
			if err := json.Unmarshal(v.reply(), &reply); err != nil || reply.Error.Code != v.code || reply.ID == nil {
				t.Fatalf("reply %s: %v", v.reply(), err)
			}
		}
		if !v.pass() {
			return
		}
		var got struct {
			JSONRPC, ID, Method, Params, Result, Error json.RawMessage
		}
		if err := json.Unmarshal(msg, &got); err != nil {
			t.Fatalf("handed on, but encoding/json says %v", err)
		}
		want := v.env
		for i, pair := range [][2][]byte{{got.JSONRPC, want.jsonrpc}, {got.ID, want.id}, {got.Method, want.method},
			{got.Params, want.params}, {got.Result, want.result}, {got.Error, want.error}} {
			if !bytes.Equal(pair[0], pair[1]) {
				t.Fatalf("%s: encoding/json reads %q, the pre-check %q", envelopeNames[i], pair[0], pair[1])
			}
		}
	})
}

// FuzzSSEReply reads arbitrary bytes as an HTTP upstream's event stream
// for the request with id 1 (CONF-04, the SSE parser): it never panics;
// what it hands on is the stream's start, unchanged; it ends cleanly only
// after handing on the whole stream with no event left open, and a refusal
// is kept for the call.
func FuzzSSEReply(f *testing.F) {
	for _, s := range []string{
		"event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n",
		"id: a\nretry: 500\ndata:\n\n",
		"data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}\n\ndata: {\"jsonrpc\"",
		"data: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}\r\n\r\n",
		"data: [1]\ndata: 2\n\n",
		": comment\n\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, stream []byte) {
		check := &ReplyCheck{}
		body := io.NopCloser(bytes.NewReader(stream))
		r := &sseReply{reply: &reply{check: check, report: func(error) {}, want: idKey([]byte("1")), max: 1 << 12},
			body: body, r: bufio.NewReader(body)}
		got, err := io.ReadAll(r)
		if !bytes.HasPrefix(stream, got) {
			t.Fatalf("handed on %q, which does not start the stream %q", got, stream)
		}
		switch {
		case err == nil && !bytes.Equal(got, stream):
			t.Fatalf("ended cleanly after %d of %d bytes", len(got), len(stream))
		case err == nil && len(stream) > 0 && !bytes.HasSuffix(stream, []byte("\n")):
			t.Fatalf("a stream ending inside a line ended cleanly: %q", stream)
		case err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && check.Problem() != err:
			t.Fatalf("refused with %v but kept %v", err, check.Problem())
		}
	})
}

// FuzzFastPaths checks each single-pass reading of an upstream message
// against the encoding/json decoding it stands in for: parseMessage,
// idKey, StdinTap.note and declaresStateless give what their slow paths
// give, on any input.
func FuzzFastPaths(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","arguments":{"x":[1,{"y":null}]}}}`,
		`{"jsonrpc":"2.0","id":"a-1","result":{"content":[]}}`, `{"jsonrpc":"2.0","id":7,"error":null,"result":null}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}`,
		`{"jsonrpc":"2.0","id":2,"method":"ping","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`,
		`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"},"_META":{}}`,
		`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2025-11-25"}}`, `{"_meta":null}`,
		`{"\u0069d":1,"ID":2,"jsonrpc":"2.0","method":5}`, `{"jsonrpc":"2\u002e0","id":-0,"result":{}}`,
		`{"jsonrpc":"2.0","id":123456789012345678,"result":{}}`, `{"jsonrpc":"2.0","id":"\u00e9","method":"x","params":"p"}`,
		`"s"`, `12`, `-0`, `1.5`, `null`, `[{"jsonrpc":"2.0","id":1,"result":{}}]`, "\"\xff\"",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, msg []byte) {
		if m, ok := parseMessageFast(msg); ok {
			slow, err := parseMessageSlow(msg)
			if err != nil || slow.JSONRPC != m.JSONRPC || !bytes.Equal(slow.ID, m.ID) ||
				!bytes.Equal(slow.Method, m.Method) || slow.Result != m.Result || slow.Error != m.Error {
				t.Fatalf("fast %+v, slow %+v (%v)", m, slow, err)
			}
		}
		if fast, slow := idKey(msg), idKeySlow(msg); fast != slow {
			t.Fatalf("idKey %q, by mcp-go %q", fast, slow)
		}
		fast, slow := StdinTap{Pending: &PendingIDs{}}, StdinTap{Pending: &PendingIDs{}}
		if a, b := fast.note(msg), slow.noteSlow(msg); a != b || fmt.Sprint(fast.Pending.ids) != fmt.Sprint(slow.Pending.ids) {
			t.Fatalf("note: %q %v, by encoding/json %q %v", a, fast.Pending.ids, b, slow.Pending.ids)
		}
		if a, b := declaresStateless(msg), declaresStatelessSlow(msg); a != b {
			t.Fatalf("declaresStateless: %v, by encoding/json %v", a, b)
		}
	})
}
