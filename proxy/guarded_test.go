package proxy

// A plain HTTP client of the gateway, for the tests that send raw
// requests to Server.HTTPHandler behind the front door's Guard.

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/mcp-router/mcp-router/proxy/frontdoor"
	"github.com/mcp-router/mcp-router/proxy/internal/rawhttp"
)

// guarded is an HTTP endpoint of the gateway and a client of it.
type guarded struct {
	URL    string // http://127.0.0.1:port/mcp
	client *http.Client
}

// guardReply is one answer, read whole: rawhttp's, with the field names
// these tests were written with.
type guardReply struct {
	status int
	header http.Header
	body   []byte
}

func (g *guarded) raw() *rawhttp.Client { return &rawhttp.Client{URL: g.URL, HTTP: g.client} }

func replyOf(r rawhttp.Reply) guardReply { return guardReply{r.Status, r.Header, r.Body} }

// send makes one request (see rawhttp.Client.Send).
func (g *guarded) send(t *testing.T, method string, body io.Reader, hdr map[string]string) guardReply {
	t.Helper()
	return replyOf(g.raw().Send(t, method, body, hdr))
}

func (g *guarded) post(t *testing.T, body string, hdr map[string]string) guardReply {
	t.Helper()
	return replyOf(g.raw().Post(t, body, hdr))
}

// initialize does the initialize handshake and returns the session id.
func (g *guarded) initialize(t *testing.T, hdr map[string]string) string {
	t.Helper()
	return g.raw().Initialize(t, hdr)
}

const (
	initializeBody  = rawhttp.InitializeBody
	initializedBody = rawhttp.InitializedBody
	toolsListBody   = rawhttp.ToolsListBody
)

// inSession returns the headers of a request in session sid.
func inSession(sid string) map[string]string { return rawhttp.InSession(sid) }

// wantRefusal checks a Guard refusal (see rawhttp.WantRefusal).
func wantRefusal(t *testing.T, r guardReply, status int, reason string) {
	t.Helper()
	rawhttp.WantRefusal(t, rawhttp.Reply{Status: r.status, Header: r.header, Body: r.body}, status, reason)
}

// BI-12 through the proxy's own HTTP handler: only issued session ids
// are accepted, and none after DELETE; unknown, missing and deleted ids
// get 404. (The spec says a missing id SHOULD get 400; mcp-go answers 404.)
func TestBI12ServerHandlerRejectsForgedIDs(t *testing.T) {
	srv := NewServer(ServerOptions{Hub: startHub(t, builtinFake("alpha"))})
	ts := httptest.NewServer(frontdoor.Guard(srv.HTTPHandler(), frontdoor.Options{}))
	t.Cleanup(func() { srv.Close(); ts.Close() })
	g := &guarded{URL: ts.URL + "/mcp", client: ts.Client()}
	sid := g.initialize(t, nil)
	if r := g.post(t, toolsListBody, inSession(sid)); r.status != http.StatusOK {
		t.Fatalf("tools/list in the session: got %d %s, want 200", r.status, r.body)
	}
	cases := map[string]map[string]string{
		"mcp-go style id":            inSession("mcp-session-9b2c5f0e-1d7a-4c3e-8f6b-2a1d0c9e8b7a"),
		"hex id":                     inSession("0123456789abcdef0123456789abcdef"),
		"missing id":                 {"MCP-Protocol-Version": "2025-06-18"},
		"live id with a digit added": inSession(sid + "0"),
	}
	for name, hdr := range cases {
		if r := g.post(t, toolsListBody, hdr); r.status != http.StatusNotFound {
			t.Errorf("%s: got %d %s, want 404", name, r.status, r.body)
		}
	}
	if r := g.send(t, http.MethodDelete, nil, inSession(sid)); r.status != http.StatusOK {
		t.Fatalf("DELETE: got %d %s, want 200", r.status, r.body)
	}
	if r := g.post(t, toolsListBody, inSession(sid)); r.status != http.StatusNotFound {
		t.Errorf("tools/list after DELETE: got %d, want 404", r.status)
	}
}
