package proxy

// A plain HTTP client of the gateway, for the tests that send raw
// requests to Server.HTTPHandler behind the front door's Guard.

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcp-router/mcp-router/proxy/frontdoor"
)

// guarded is an HTTP endpoint of the gateway and a client of it.
type guarded struct {
	URL    string // http://127.0.0.1:port/mcp
	client *http.Client
}

type guardReply struct {
	status int
	header http.Header
	body   []byte
}

// send makes one request; hdr values replace the defaults, and a "Host"
// key sets the Host header.
func (g *guarded) send(t *testing.T, method string, body io.Reader, hdr map[string]string) guardReply {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, g.URL, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header[http.CanonicalHeaderKey(k)] = []string{v}
	}
	resp, err := g.client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, g.URL, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading reply: %v", err)
	}
	return guardReply{resp.StatusCode, resp.Header, b}
}

func (g *guarded) post(t *testing.T, body string, hdr map[string]string) guardReply {
	t.Helper()
	return g.send(t, http.MethodPost, strings.NewReader(body), hdr)
}

const (
	initializeBody  = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"guard-test","version":"1"}}}`
	initializedBody = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
	toolsListBody   = `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
)

// initialize does the initialize handshake and returns the session id.
func (g *guarded) initialize(t *testing.T, hdr map[string]string) string {
	t.Helper()
	r := g.post(t, initializeBody, hdr)
	if r.status != http.StatusOK {
		t.Fatalf("initialize: got %d %s, want 200", r.status, r.body)
	}
	sid := r.header.Get(server.HeaderKeySessionID)
	if sid == "" {
		t.Fatal("initialize: no Mcp-Session-Id in the reply")
	}
	h := map[string]string{server.HeaderKeySessionID: sid, "MCP-Protocol-Version": "2025-06-18"}
	for k, v := range hdr {
		h[k] = v
	}
	if r := g.post(t, initializedBody, h); r.status != http.StatusAccepted {
		t.Fatalf("notifications/initialized: got %d %s, want 202", r.status, r.body)
	}
	return sid
}

// inSession returns the headers of a request in session sid.
func inSession(sid string) map[string]string {
	return map[string]string{server.HeaderKeySessionID: sid, "MCP-Protocol-Version": "2025-06-18"}
}

// wantRefusal checks a Guard refusal: the status, and a JSON-RPC error
// object without id whose message contains reason.
func wantRefusal(t *testing.T, r guardReply, status int, reason string) {
	t.Helper()
	if r.status != status {
		t.Fatalf("status: got %d %s, want %d", r.status, r.body, status)
	}
	if ct := r.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type: got %q, want application/json", ct)
	}
	var msg map[string]json.RawMessage
	if err := json.Unmarshal(r.body, &msg); err != nil {
		t.Fatalf("body %q is not a JSON object: %v", r.body, err)
	}
	if _, ok := msg["id"]; ok {
		t.Errorf("body %s has an id, want none", r.body)
	}
	var e struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
	if string(msg["jsonrpc"]) != `"2.0"` || json.Unmarshal(msg["error"], &e) != nil || e.Code != mcp.INVALID_REQUEST {
		t.Errorf("body: got %s, want a JSON-RPC 2.0 error with code %d", r.body, mcp.INVALID_REQUEST)
	}
	if !strings.Contains(e.Message, reason) {
		t.Errorf("error message: got %q, want it to contain %q", e.Message, reason)
	}
}

// BI-12 through the proxy's own HTTP handler: only issued session ids
// are accepted, and none after DELETE.
func TestBI12ServerHandlerRejectsForgedIDs(t *testing.T) {
	srv := NewServer(ServerOptions{Hub: startHub(t, builtinFake("alpha"))})
	ts := httptest.NewServer(frontdoor.Guard(srv.HTTPHandler(), frontdoor.Options{}))
	t.Cleanup(func() { srv.Close(); ts.Close() })
	g := &guarded{URL: ts.URL + "/mcp", client: ts.Client()}
	sid := g.initialize(t, nil)
	if r := g.post(t, toolsListBody, inSession(sid)); r.status != http.StatusOK {
		t.Fatalf("tools/list in the session: got %d %s, want 200", r.status, r.body)
	}
	forged := "mcp-session-9b2c5f0e-1d7a-4c3e-8f6b-2a1d0c9e8b7a"
	if r := g.post(t, toolsListBody, inSession(forged)); r.status != http.StatusNotFound {
		t.Errorf("forged id: got %d, want 404", r.status)
	}
	if r := g.send(t, http.MethodDelete, nil, inSession(sid)); r.status != http.StatusOK {
		t.Fatalf("DELETE: got %d %s, want 200", r.status, r.body)
	}
	if r := g.post(t, toolsListBody, inSession(sid)); r.status != http.StatusNotFound {
		t.Errorf("tools/list after DELETE: got %d, want 404", r.status)
	}
}
