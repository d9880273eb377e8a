// Package rawhttp is a plain HTTP client of an MCP streamable HTTP
// endpoint, for the tests that check what the gateway's front door and
// server answer byte for byte: status codes, headers and refusal bodies
// that an MCP client library would hide.
package rawhttp

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// Messages the tests send.
const (
	InitializeBody  = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"guard-test","version":"1"}}}`
	InitializedBody = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
	ToolsListBody   = `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
)

// Client sends requests to URL, an MCP endpoint such as
// http://127.0.0.1:port/mcp.
type Client struct {
	URL  string
	HTTP *http.Client
}

// Reply is one answer, read whole.
type Reply struct {
	Status int
	Header http.Header
	Body   []byte
}

// Send makes one request; hdr values replace the defaults, and a "Host"
// key sets the Host header.
func (c *Client) Send(t testing.TB, method string, body io.Reader, hdr map[string]string) Reply {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, c.URL, body)
	if err != nil {
		t.Fatal(err)
	}
	r, err := c.do(req, hdr)
	if err != nil {
		t.Fatalf("%s %s: %v", method, c.URL, err)
	}
	return r
}

// Post sends body with POST (see Send).
func (c *Client) Post(t testing.TB, body string, hdr map[string]string) Reply {
	t.Helper()
	return c.Send(t, http.MethodPost, strings.NewReader(body), hdr)
}

// Do is Post without a testing.TB, for other goroutines.
func (c *Client) Do(ctx context.Context, body string, hdr map[string]string) (Reply, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.URL, strings.NewReader(body))
	if err != nil {
		return Reply{}, err
	}
	return c.do(req, hdr)
}

func (c *Client) do(req *http.Request, hdr map[string]string) (Reply, error) {
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header[http.CanonicalHeaderKey(k)] = []string{v}
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return Reply{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return Reply{resp.StatusCode, resp.Header, b}, err
}

// Initialize does the initialize handshake with hdr and returns the
// session id.
func (c *Client) Initialize(t testing.TB, hdr map[string]string) string {
	t.Helper()
	r := c.Post(t, InitializeBody, hdr)
	if r.Status != http.StatusOK {
		t.Fatalf("initialize: got %d %s, want 200", r.Status, r.Body)
	}
	sid := r.Header.Get(server.HeaderKeySessionID)
	if sid == "" {
		t.Fatal("initialize: no Mcp-Session-Id in the reply")
	}
	h := InSession(sid)
	for k, v := range hdr {
		h[k] = v
	}
	if r := c.Post(t, InitializedBody, h); r.Status != http.StatusAccepted {
		t.Fatalf("notifications/initialized: got %d %s, want 202", r.Status, r.Body)
	}
	return sid
}

// InSession returns the headers of a request in session sid.
func InSession(sid string) map[string]string {
	return map[string]string{server.HeaderKeySessionID: sid, "MCP-Protocol-Version": "2025-06-18"}
}

// WantRefusal checks a refusal of the front door: the status, and a
// JSON-RPC error object without id whose message contains reason.
func WantRefusal(t testing.TB, r Reply, status int, reason string) {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status: got %d %s, want %d", r.Status, r.Body, status)
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type: got %q, want application/json", ct)
	}
	var msg map[string]json.RawMessage
	if err := json.Unmarshal(r.Body, &msg); err != nil {
		t.Fatalf("body %q is not a JSON object: %v", r.Body, err)
	}
	if _, ok := msg["id"]; ok {
		t.Errorf("body %s has an id, want none", r.Body)
	}
	var e struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
	if string(msg["jsonrpc"]) != `"2.0"` || json.Unmarshal(msg["error"], &e) != nil || e.Code != mcp.INVALID_REQUEST {
		t.Errorf("body: got %s, want a JSON-RPC 2.0 error with code %d", r.Body, mcp.INVALID_REQUEST)
	}
	if !strings.Contains(e.Message, reason) {
		t.Errorf("error message: got %q, want it to contain %q", e.Message, reason)
	}
}
