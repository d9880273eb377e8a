package proxy

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-router/mcp-router/proxy/internal/wire"
)

// encoderLine is what a json.Encoder writes for msg.
func encoderLine(t testing.TB, msg any) ([]byte, error) {
	t.Helper()
	var b bytes.Buffer
	err := json.NewEncoder(&b).Encode(msg)
	return b.Bytes(), err
}

// The reply to a tools/call is written byte for byte as the encoder
// writes it; other messages are left to the encoder.
func TestCallReplyIsEncoderOutput(t *testing.T) {
	meta := &mcp.Meta{ProgressToken: "p1", AdditionalFields: map[string]any{
		"io.modelcontextprotocol/serverInfo": map[string]any{"name": "alpha", "version": "1.0"},
		"numbers":                            []any{1.5e-7, 1e21, int64(-42), 3, 0.0, 123456789.125},
		"others":                             []any{true, false, nil, "a<b", []any{}, map[string]any{}},
		"typed":                              mcp.Implementation{Name: "x", Version: "y"},
	}}
	text := func(s string) mcp.TextContent { return mcp.NewTextContent(s) }
	results := []struct {
		name string
		res  *mcp.CallToolResult
	}{
		{"text", mcp.NewToolResultText("hello")},
		{"escapes", mcp.NewToolResultText("<b>\"q\" & \\ \b\f\n\r\t\x00\x1f\x7f</b>")},
		{"unicode", mcp.NewToolResultText("ünïcode \u2028 \u2029 \ufffd 😀")},
		{"invalid utf-8", mcp.NewToolResultText("a\xffb\xe2\x80c\xc3")},
		{"empty", &mcp.CallToolResult{}},
		{"several items", &mcp.CallToolResult{Content: []mcp.Content{text("a"), text(""), text("c")}}},
		{"error", mcp.NewToolResultError("boom")},
		{"meta and result type", &mcp.CallToolResult{Result: mcp.Result{Meta: meta, ResultType: mcp.ResultTypeComplete},
			Content: []mcp.Content{text("x")}}},
		{"item meta", &mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent{Type: "text", Text: "x",
			Meta: &mcp.Meta{ProgressToken: int64(7)}}}}},
		{"shadowed token", &mcp.CallToolResult{Result: mcp.Result{Meta: &mcp.Meta{ProgressToken: "a",
			AdditionalFields: map[string]any{"progressToken": "bb"}}}}},
		{"raw structured", &mcp.CallToolResult{Content: []mcp.Content{text("x")},
			RawStructuredContent: json.RawMessage(`{"a":[1,2.5e-9,"s"],"b":null}`), StructuredContent: map[string]any{"ignored": true}}},
		{"raw structured with space and html", &mcp.CallToolResult{RawStructuredContent: json.RawMessage(`{ "a" : "<&>\u2028" }`)}},
		{"structured map", &mcp.CallToolResult{StructuredContent: map[string]any{
			"error": map[string]any{"kind": "x<y", "retry_after_ms": int64(1500), "n": 3}}}},
		{"request state", &mcp.CallToolResult{Content: []mcp.Content{text("x")},
			MultiRoundTripResult: mcp.MultiRoundTripResult{RequestState: "s"}}},
		{"other content", &mcp.CallToolResult{Content: []mcp.Content{mcp.NewImageContent("AAAA", "image/png"),
			mcp.NewEmbeddedResource(mcp.TextResourceContents{URI: "file:///a", Text: "<t>"}), &mcp.TextContent{Type: "text", Text: "p"}}}},
		{"annotated", &mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent{Type: "text", Text: "x",
			Annotated: mcp.Annotated{Annotations: &mcp.Annotations{Priority: ptr(0.5)}}}}}},
		{"typed structured", &mcp.CallToolResult{StructuredContent: struct{ A string }{"<"}}},
	}
	ids := []any{float64(1), "req-1", int64(9007199254740993), "<&>", 1.5}
	for _, c := range results {
		t.Run(c.name, func(t *testing.T) {
			for _, id := range ids {
				for _, result := range []any{*c.res, c.res} {
					msg := mcp.NewJSONRPCResultResponse(mcp.NewRequestId(id), result)
					want, err := encoderLine(t, msg)
					if err != nil {
						t.Fatal(err)
					}
					got, ok := appendCallReply([]byte("kept"), msg)
					if !ok || !bytes.Equal(got, append([]byte("kept"), want...)) {
						t.Errorf("appendCallReply(%T, id %v): got %q (%v), want %q", result, id, got, ok, want)
					}
				}
			}
		})
	}
}

// What the encoder refuses, and messages other than a call's reply, are
// left to it.
func TestCallReplyLeavesOthersToTheEncoder(t *testing.T) {
	for name, msg := range map[string]any{
		"nan":           mcp.NewJSONRPCResultResponse(mcp.NewRequestId(1), &mcp.CallToolResult{StructuredContent: map[string]any{"x": math.NaN()}}),
		"invalid raw":   mcp.NewJSONRPCResultResponse(mcp.NewRequestId(1), &mcp.CallToolResult{RawStructuredContent: json.RawMessage(`{`)}),
		"other result":  mcp.NewJSONRPCResultResponse(mcp.NewRequestId(1), mcp.ListToolsResult{}),
		"nil result":    mcp.NewJSONRPCResultResponse(mcp.NewRequestId(1), (*mcp.CallToolResult)(nil)),
		"input request": mcp.NewJSONRPCResultResponse(mcp.NewRequestId(1), &mcp.CallToolResult{MultiRoundTripResult: mcp.MultiRoundTripResult{InputRequests: mcp.InputRequests{"a": {}}}}),
		"error":         mcp.JSONRPCError{JSONRPC: mcp.JSONRPC_VERSION, ID: mcp.NewRequestId(1)},
		"notification":  mcp.JSONRPCNotification{JSONRPC: mcp.JSONRPC_VERSION},
	} {
		if got, ok := appendCallReply([]byte("kept"), msg); ok || string(got) != "kept" {
			t.Errorf("%s: got %q, %v; want it left to the encoder", name, got, ok)
		}
	}
}

// A result decoded from any upstream reply is written as the encoder
// writes it, or left to the encoder.
func FuzzCallReply(f *testing.F) {
	f.Add(`{"content":[{"type":"text","text":"a<b>\u2028\ud800"}],"structuredContent":{"x":[1e21,-0,1.5e-7]},"_meta":{"k":"v"},"isError":true}`, "7")
	f.Add(`{"content":[{"type":"text","text":"x","_meta":{"progressToken":3}},{"type":"image","data":"AA","mimeType":"image/png"}],"structuredContent": { "a" : 1 }}`, `"id"`)
	f.Fuzz(func(t *testing.T, reply, id string) {
		var res mcp.CallToolResult
		var rid mcp.RequestId
		if json.Unmarshal([]byte(reply), &res) != nil || json.Unmarshal([]byte(id), &rid) != nil {
			return
		}
		msg := mcp.NewJSONRPCResultResponse(rid, res)
		want, err := encoderLine(t, msg)
		got, ok := appendCallReply(nil, msg)
		if err != nil {
			if ok {
				t.Errorf("appendCallReply wrote %q where the encoder fails (%v)", got, err)
			}
			return
		}
		if ok && !bytes.Equal(got, want) {
			t.Errorf("appendCallReply: got %q, want %q", got, want)
		}
	})
}

func ptr[T any](v T) *T { return &v }

// The fast path answers a session-era tools/call of a catalog tool, and
// leaves to mcp-go each request it would not answer as mcp-go does.
func TestStdioFastCallServes(t *testing.T) {
	srv := NewServer(ServerOptions{Hub: startHub(t, builtinFake("alpha"))})
	t.Cleanup(srv.Close)
	c := &stdioConn{s: srv}
	ctx := srv.mcp.WithContext(t.Context(), newStdioSession(func(any) error { return nil }))
	const handshake = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"
	const head = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":`
	for name, tc := range map[string]struct {
		params string
		served bool
	}{
		"catalog tool":                        {`{"name":"alpha_echo","arguments":{"text":"fast"}}`, true},
		"own tool":                            {`{"name":"call_tool","arguments":{"name":"alpha_echo","arguments":{"text":"x"}}}`, false},
		"unknown tool":                        {`{"name":"alpha_nothing"}`, false},
		"stateless era":                       {`{"name":"alpha_echo","arguments":{"text":"fast"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}`, true},
		"stateless era without capabilities":  {`{"name":"alpha_echo","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}`, false},
		"stateless era of an unknown version": {`{"name":"alpha_echo","_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01","io.modelcontextprotocol/clientCapabilities":{}}}`, false},
		"task":                                {`{"name":"alpha_echo","task":{"ttl":1000}}`, false},
		"multi-round answer":                  {`{"name":"alpha_echo","requestState":"s"}`, false},
	} {
		t.Run(name, func(t *testing.T) {
			f := wire.NewStdioFilter(strings.NewReader(handshake+head+tc.params+"}\n"), io.Discard, slog.New(slog.DiscardHandler))
			var m wire.Message
			for !m.IsMethod("tools/call") {
				var err error
				if m, err = f.Next(); err != nil {
					t.Fatalf("reading the request: %v", err)
				}
				if m.IsMethod("initialize") { // answered: the handshake lets the call through
					_, _ = f.Out().Write([]byte(`{"jsonrpc":"2.0","id":0,"result":{}}` + "\n"))
				}
			}
			reply, served := c.fastCall(ctx, m, "1")
			if served != tc.served {
				t.Fatalf("served on the fast path: got %v, want %v", served, tc.served)
			}
			if !served {
				return
			}
			line, ok := appendCallReply(nil, reply)
			if !ok || !strings.HasPrefix(string(line), `{"jsonrpc":"2.0","id":1,"result":{`) || !strings.Contains(string(line), `"content":[{"type":"text","text":"fast"}]`) {
				t.Errorf("reply: got %s, want the echo's result under id 1", line)
			}
		})
	}
}

// A tools/call of the stateless era answered on the fast path is, byte
// for byte, what mcp-go answers to it: the resultType and the server's
// identity stamped as mcp-go stamps them. Both are asked in turn, the
// echo answering the same to each.
func TestStdioFastCallStatelessMatchesMCPGo(t *testing.T) {
	srv := NewServer(ServerOptions{Hub: startHub(t, builtinFake("alpha")), Name: "gw", Version: "1.2.3"})
	t.Cleanup(srv.Close)
	sess := newStdioSession(func(any) error { return nil })
	c := &stdioConn{s: srv, sess: sess}
	ctx := srv.mcp.WithContext(t.Context(), sess)
	for name, meta := range map[string]string{
		"plain":        `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"}}`,
		"progress":     `{"progressToken":"p1","io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"sampling":{}}}`,
		"failing tool": `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`,
	} {
		t.Run(name, func(t *testing.T) {
			tool := "alpha_echo"
			if name == "failing tool" {
				tool = "alpha_fail"
			}
			line := `{"jsonrpc":"2.0","id":"r1","method":"tools/call","params":{"name":"` + tool + `","arguments":{"text":"same"},"_meta":` + meta + "}}\n"
			f := wire.NewStdioFilter(strings.NewReader(line), io.Discard, slog.New(slog.DiscardHandler))
			m, err := f.Next()
			if err != nil {
				t.Fatal(err)
			}
			reply, served := c.fastCall(ctx, m, "r1")
			if !served {
				t.Fatal("not served on the fast path")
			}
			if got := sess.GetClientCapabilities().Sampling != nil; got != (name == "progress") {
				t.Errorf("the session holds sampling: %v, want it as the request declared it (the era's state)", got)
			}
			fast, ok := appendCallReply(nil, reply)
			if !ok {
				t.Fatalf("appendCallReply refused %#v", reply)
			}
			want, err := encoderLine(t, srv.mcp.HandleMessage(ctx, []byte(line)))
			if err != nil {
				t.Fatal(err)
			}
			if string(fast) != string(want) {
				t.Errorf("fast path:\n%s\nmcp-go:\n%s", fast, want)
			}
			if !strings.Contains(string(fast), `"resultType":"complete"`) || !strings.Contains(string(fast), `"name":"gw"`) {
				t.Errorf("reply %s: want resultType complete and the server's identity", fast)
			}
		})
	}
}

// On the fast path a call of the stateless era is cancelled by the
// client's notifications/cancelled as a session-era one is: the upstream
// sees the cancellation, and the next call of that era is answered,
// stamped as its era wants.
func TestStdioFastCallStatelessCancelledByClient(t *testing.T) {
	h := startHub(t, builtinFake("alpha"))
	srv := NewServer(ServerOptions{Hub: h})
	t.Cleanup(srv.Close)
	c := serveRawStdio(t, srv)
	const meta = `"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}`
	c.send(t, `{"jsonrpc":"2.0","id":"s1","method":"tools/call","params":{"name":"alpha_hang","_meta":{"progressToken":"hang-1",`+meta+`}}}`)
	deadline := time.NewTimer(replyWait)
	defer deadline.Stop()
	for m := c.recv(t, deadline.C); m.Method != "notifications/progress"; m = c.recv(t, deadline.C) {
		// the upstream's progress says the call has arrived
	}
	c.send(t, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"s1"}}`)
	eventually(t, 5*time.Second, "the upstream to see the cancellation", func() bool {
		return callText(t, h, "alpha_cancellations", nil) == "1"
	})
	c.send(t, `{"jsonrpc":"2.0","id":"s2","method":"tools/call","params":{"name":"alpha_echo","arguments":{"text":"next"},"_meta":{`+meta+`}}}`)
	m := c.await(t, `"s2"`)
	if got := m.tool(t).text(); got != "next" || !strings.Contains(m.raw, `"resultType":"complete"`) {
		t.Errorf("the call after the cancellation: got %s, want next, stamped complete", m.raw)
	}
}

// A request id goes into the fast path's reply as json.Unmarshal reads it,
// whole numbers parsed on their own included.
func TestRequestIDValueAsUnmarshal(t *testing.T) {
	for _, raw := range []string{`1`, `0`, `42`, `9007199254740991`, `9007199254740993`, `18446744073709551616`,
		`-1`, `-0`, `1.5`, `1e3`, `"7"`, `"a\u00e9"`} {
		var want any
		if err := json.Unmarshal([]byte(raw), &want); err != nil {
			t.Fatal(err)
		}
		if got := requestIDValue(json.RawMessage(raw)); got != want {
			t.Errorf("requestIDValue(%s): got %#v, want %#v", raw, got, want)
		}
	}
}
