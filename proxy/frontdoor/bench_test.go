package frontdoor

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/server"

	"github.com/mcp-router/mcp-router/proxy/internal/wire"
)

// BenchmarkGuardCall measures what the front door costs a tools/call POST
// in an open session, on loopback without tokens: Guard and the pre-check
// in front of a handler that reads the body as mcp-go's does and answers.
// -benchmem shows the allocations each cut of the HTTP path saves.
func BenchmarkGuardCall(b *testing.B) {
	const sid = "mcp-session-bench"
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.ReadAll(r.Body); err != nil {
			b.Error(err)
		}
		if r.Header.Get(server.HeaderKeySessionID) == "" {
			w.Header().Set(server.HeaderKeySessionID, sid)
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{}}`)
	})
	h := Guard(wire.PrecheckHTTP{Next: next}, Options{})
	post := func(body, session string) *http.Request {
		r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:8080/mcp", strings.NewReader(body))
		r.RemoteAddr = "127.0.0.1:40000"
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			r.Header.Set(server.HeaderKeySessionID, session)
			r.Header.Set("MCP-Protocol-Version", "2025-11-25")
		}
		return r
	}
	init := httptest.NewRecorder()
	h.ServeHTTP(init, post(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}`, ""))
	if init.Code != http.StatusOK {
		b.Fatalf("initialize: %d %s", init.Code, init.Body)
	}
	const call = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"calculator_add","arguments":{"a":1,"b":2}}}`
	b.ReportAllocs()
	for b.Loop() {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, post(call, sid))
		if w.Code != http.StatusOK {
			b.Fatalf("call: %d %s", w.Code, w.Body)
		}
	}
}
