package proxy

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/mcp-router/mcp-router/routing"
)

// FuzzServerMessage hands arbitrary bytes to the client-facing server as
// one JSON-RPC message (CONF-04): it must answer or ignore, never panic.
func FuzzServerMessage(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"f","version":"1"}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"_meta":{"mcp-router/query":"echo"}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"call_tool","arguments":{"name":"alpha_echo","arguments":{"text":"x"}}}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"request_more_tools","arguments":{"query":"sleep","tools":["alpha_sleep"],"route":"SIMPLE_TOOL"}}}`,
		`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"run_plan","arguments":{"steps":[{"id":"a","tool":"alpha_echo","args":{"text":"$<<b>>"}}]}}}`,
		`[{"jsonrpc":"2.0","id":6,"method":"ping"}]`, `{"jsonrpc":"1.0"}`, `{`, `null`,
	} {
		f.Add([]byte(seed))
	}
	h := startHub(f, builtinFake("alpha"))
	srv := NewServer(ServerOptions{Hub: h, Router: routing.NewRouter(routing.RouterOptions{})})
	defer srv.Close()
	f.Fuzz(func(t *testing.T, msg []byte) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if resp := srv.mcp.HandleMessage(ctx, json.RawMessage(msg)); resp != nil {
			if _, err := json.Marshal(resp); err != nil {
				t.Errorf("an answer that does not encode: %v", err)
			}
		}
	})
}
