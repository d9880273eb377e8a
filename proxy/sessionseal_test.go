package proxy

import (
	"bytes"
	"crypto/sha256"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-router/mcp-router/proxy/frontdoor"
	"github.com/mcp-router/mcp-router/routing"
	"github.com/mcp-router/mcp-router/state"
)

// replica is one gateway process as a test sees it: a server on its own
// hub, behind the guard, under the given session key.
type replica struct {
	srv *Server
	h   http.Handler
}

func newReplica(t *testing.T, key *SessionKey, tokens []string) replica {
	t.Helper()
	return newReplicaOn(t, key, tokens, nil)
}

// newReplicaOn is newReplica with the ended sessions of a shared state.
func newReplicaOn(t *testing.T, key *SessionKey, tokens []string, ended EndedSessions) replica {
	t.Helper()
	h := startHub(t, builtinFake("alpha"))
	srv := NewServer(ServerOptions{Hub: h, SessionKey: key, Router: routing.NewRouter(routing.RouterOptions{}), EndedSessions: ended})
	t.Cleanup(srv.Close)
	return replica{srv: srv, h: frontdoor.Guard(srv.HTTPHandler(), frontdoor.Options{BearerTokens: tokens, SessionOwner: srv.SessionOwner})}
}

// balancer sends every request to the replica chosen last, as a load
// balancer does once a replica goes away.
type balancer struct {
	to atomic.Pointer[replica]
}

func (b *balancer) ServeHTTP(w http.ResponseWriter, r *http.Request) { b.to.Load().h.ServeHTTP(w, r) }

// bearerRT adds a bearer token to every request of a client.
type bearerRT struct{ token string }

func (t bearerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+t.token)
	return http.DefaultTransport.RoundTrip(r)
}

func sdkClientOf(t *testing.T, url, token string) *sdkClient {
	t.Helper()
	cl, c := newSDKClient()
	tr := &sdk.StreamableClientTransport{Endpoint: url + "/mcp", MaxRetries: -1, HTTPClient: &http.Client{Transport: bearerRT{token}}}
	s, err := cl.Connect(t.Context(), tr, sessionEra)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	c.session = s
	t.Cleanup(func() { s.Close() })
	return c
}

// post sends one JSON-RPC message in session sid with token and returns
// the status.
func post(t *testing.T, url, token, sid, body string) int {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, url+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	req.Header.Set("Authorization", "Bearer "+token)
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

// deleteSession ends session sid with token and returns the status.
func deleteSession(t *testing.T, url, token, sid string) int {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodDelete, url+"/mcp", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

const listToolsMsg = `{"jsonrpc":"2.0","id":7,"method":"tools/list"}`

// A 2025-11-25 session opened on one replica goes on on another that
// shares its session key: the second replica never saw it, and resumes it
// from its sealed id. With another principal's token, a changed id, a
// replica under another key, or after DELETE, the id is unknown (404).
func TestSessionResumesOnAnotherReplica(t *testing.T) {
	key := RandomSessionKey()
	tokens := []string{"token-of-ann", "token-of-bob"}
	a, b, other := newReplica(t, key, tokens), newReplica(t, key, tokens), newReplica(t, RandomSessionKey(), tokens)
	var lb balancer
	lb.to.Store(&a)
	ts := httptest.NewServer(&lb)
	t.Cleanup(ts.Close)

	c := sdkClientOf(t, ts.URL, tokens[0])
	if got := resultText(c.call(t, "alpha_echo", map[string]any{"text": "on a"})); got != "on a" {
		t.Fatalf("call on the first replica: %q", got)
	}
	sid := c.session.ID()
	if sid == "" {
		t.Fatal("no session id")
	}

	lb.to.Store(&b) // the first replica is gone, as far as the client can tell
	if got := resultText(c.call(t, "alpha_echo", map[string]any{"text": "on b"})); got != "on b" {
		t.Fatalf("call on the second replica: %q", got)
	}
	if !b.srv.ids.isLive(sid) {
		t.Error("the second replica did not take the session on")
	}

	direct := httptest.NewServer(b.h)
	t.Cleanup(direct.Close)
	otherTS := httptest.NewServer(other.h)
	t.Cleanup(otherTS.Close)
	flipped := []byte(sid)
	flipped[len(flipped)/2] ^= 1
	for name, tc := range map[string]struct {
		url, token, sid string
		want            int
	}{
		"its own token":         {direct.URL, tokens[0], sid, http.StatusOK},
		"another token":         {direct.URL, tokens[1], sid, http.StatusNotFound},
		"a changed id":          {direct.URL, tokens[0], string(flipped), http.StatusNotFound},
		"a replica without key": {otherTS.URL, tokens[0], sid, http.StatusNotFound},
	} {
		if got := post(t, tc.url, tc.token, tc.sid, listToolsMsg); got != tc.want {
			t.Errorf("%s: status %d, want %d", name, got, tc.want)
		}
	}

	if got := deleteSession(t, direct.URL, tokens[0], sid); got != http.StatusOK {
		t.Fatalf("DELETE: %d", got)
	}
	if got := post(t, direct.URL, tokens[0], sid, listToolsMsg); got != http.StatusNotFound {
		t.Errorf("after DELETE: status %d, want 404", got)
	}
}

// A sealed id carries what the client said in its initialize, and the
// replica that resumes the session tells its MCP server the same: the
// client's capabilities survive the move.
func TestSealedIDCarriesTheInitialize(t *testing.T) {
	ids := newSealedIDs(RandomSessionKey())
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25",` +
		`"capabilities":{"sampling":{},"elicitation":{}},"clientInfo":{"name":"claude","version":"1.2"}}}`
	req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(init))
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(init)), nil }
	req = req.WithContext(frontdoor.WithPrincipal(req.Context(), "token-abc"))
	id := ids.ResolveSessionIdManager(req).Generate()

	other := newSealedIDs(ids.key)
	p, err := other.open(t.Context(), id, "token-abc")
	if err != nil {
		t.Fatalf("open on another replica: %v", err)
	}
	if p.Protocol != "2025-11-25" || p.Client == nil || p.Client.Name != "claude" || p.Client.Version != "1.2" {
		t.Errorf("carried %+v, want the initialize's version and client", p)
	}
	if !bytes.Equal(p.Caps, []byte(`{"sampling":{},"elicitation":{}}`)) {
		t.Errorf("capabilities %s", p.Caps)
	}
	if _, err := other.open(t.Context(), id, "token-def"); err != errSessionPrincipal {
		t.Errorf("another principal: %v, want %v", err, errSessionPrincipal)
	}
	if len(id) > maxSealedIDBytes {
		t.Errorf("id of %d bytes", len(id))
	}
}

func TestParseSessionKey(t *testing.T) {
	for name, tc := range map[string]struct {
		in string
		ok bool
	}{
		"std padded": {"AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=", true},
		"url raw":    {"AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8", true},
		"short":      {"AAECAwQFBgcICQoLDA0ODw==", false},
		"not base64": {"this is not a key!", false},
	} {
		if _, err := ParseSessionKey(tc.in); (err == nil) != tc.ok {
			t.Errorf("%s: err %v, want ok=%v", name, err, tc.ok)
		}
	}
}

// Behind the guard, which removes the Authorization header, a handle is
// still bound to the token that got it: on another replica, another
// token's request ignores it, and the same token's uses it.
func TestHandleBoundToItsTokenAcrossReplicas(t *testing.T) {
	key := RandomSessionKey()
	tokens := []string{"token-of-ann", "token-of-bob"}
	a, b := newReplica(t, key, tokens), newReplica(t, key, tokens)
	tsA, tsB := httptest.NewServer(a.h), httptest.NewServer(b.h)
	t.Cleanup(tsA.Close)
	t.Cleanup(tsB.Close)
	connect := func(url, token string) *sdk.ClientSession {
		cl, _ := newSDKClient()
		s, err := cl.Connect(t.Context(), &sdk.StreamableClientTransport{Endpoint: url + "/mcp", MaxRetries: -1,
			HTTPClient: &http.Client{Transport: bearerRT{token}}}, nil) // the stateless protocol
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	res, err := connect(tsA.URL, tokens[0]).CallTool(t.Context(), &sdk.CallToolParams{Name: "request_more_tools",
		Arguments: map[string]any{"query": "echo the text back"}})
	if err != nil {
		t.Fatal(err)
	}
	handle, _ := res.Meta[HandleMetaKey].(string)
	if handle == "" {
		t.Fatalf("no handle in %v", res.Meta)
	}
	for token, wantIgnored := range map[string]bool{tokens[0]: false, tokens[1]: true} {
		res, err := connect(tsB.URL, token).CallTool(t.Context(), &sdk.CallToolParams{Name: "request_more_tools",
			Arguments: map[string]any{"query": "echo the text back", "handle": handle}})
		if err != nil {
			t.Fatal(err)
		}
		if ignored := strings.Contains(resultText(res), "handle passed was ignored"); ignored != wantIgnored {
			t.Errorf("token %s on the other replica: ignored=%v, want %v: %s", token, ignored, wantIgnored, resultText(res))
		}
	}
}

// An id the idle sweep dropped (Terminate without a request) is resumed on
// its next request; one ended by DELETE is not, in the process that got
// the DELETE.
func TestSealedIDEndedOnlyByDelete(t *testing.T) {
	ids := newSealedIDs(RandomSessionKey())
	req := httptest.NewRequest(http.MethodPost, "/mcp", nil)
	swept, deleted := ids.ResolveSessionIdManager(req).Generate(), ids.ResolveSessionIdManager(req).Generate()
	ids.ResolveSessionIdManager(nil).Terminate(swept)
	ids.ResolveSessionIdManager(httptest.NewRequest(http.MethodDelete, "/mcp", nil)).Terminate(deleted)
	for id, want := range map[string]error{swept: nil, deleted: errSessionEnded} {
		if ids.isLive(id) {
			t.Errorf("%s still live after Terminate", id)
		}
		if _, err := ids.open(t.Context(), id, LocalPrincipal); err != want {
			t.Errorf("open after Terminate: %v, want %v", err, want)
		}
	}
	if _, err := newSealedIDs(ids.key).open(t.Context(), deleted, LocalPrincipal); err != nil {
		t.Errorf("another process, which did not get the DELETE: %v, want it resumed", err)
	}
}

// With a shared state store, a DELETE on one replica ends the session on
// the others: a replica that never held it answers 404 for its id, as
// for an unknown session, while a session not deleted still moves. A
// replica on the same session key without the store still resumes the
// deleted id (a DELETE there is per process), which is what the store
// changes.
func TestDeleteEndsSessionOnEveryReplica(t *testing.T) {
	db, err := state.Open(t.Context(), state.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	key := RandomSessionKey()
	tokens := []string{"token-of-ann"}
	a, b := newReplicaOn(t, key, tokens, db.EndedSessions()), newReplicaOn(t, key, tokens, db.EndedSessions())
	alone := newReplica(t, key, tokens)
	urls := map[*replica]string{}
	for _, r := range []*replica{&a, &b, &alone} {
		ts := httptest.NewServer(r.h)
		t.Cleanup(ts.Close)
		urls[r] = ts.URL
	}

	ended, kept := sdkClientOf(t, urls[&a], tokens[0]), sdkClientOf(t, urls[&a], tokens[0])
	for _, c := range []*sdkClient{ended, kept} {
		if got := resultText(c.call(t, "alpha_echo", map[string]any{"text": "on a"})); got != "on a" {
			t.Fatalf("call on the first replica: %q", got)
		}
	}
	sid := ended.session.ID()
	if got := deleteSession(t, urls[&a], tokens[0], sid); got != http.StatusOK {
		t.Fatalf("DELETE on the first replica: %d", got)
	}
	if got := post(t, urls[&b], tokens[0], sid, listToolsMsg); got != http.StatusNotFound {
		t.Errorf("the deleted session on the second replica: status %d, want 404", got)
	}
	if b.srv.ids.isLive(sid) {
		t.Error("the second replica resumed the deleted session")
	}
	if got := post(t, urls[&b], tokens[0], sid, listToolsMsg); got != http.StatusNotFound {
		t.Errorf("the deleted session on the second replica, again: status %d, want 404", got)
	}
	if got := post(t, urls[&b], tokens[0], kept.session.ID(), listToolsMsg); got != http.StatusOK {
		t.Errorf("a session not deleted, on the second replica: status %d, want 200", got)
	}
	if got := post(t, urls[&alone], tokens[0], sid, listToolsMsg); got != http.StatusOK {
		t.Errorf("the deleted session on a replica without the shared state: status %d, want 200 (resumed)", got)
	}
}

// When the shared state cannot be written, a DELETE fails (500) and the
// session goes on, so that the client may try again; when it cannot be
// read, a sealed id is not resumed (404: the client opens a new session)
// rather than perhaps resuming one ended elsewhere.
func TestEndedSessionsUnreachable(t *testing.T) {
	db, err := state.Open(t.Context(), state.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	key := RandomSessionKey()
	tokens := []string{"token-of-ann"}
	a, b := newReplicaOn(t, key, tokens, db.EndedSessions()), newReplicaOn(t, key, tokens, db.EndedSessions())
	tsA, tsB := httptest.NewServer(a.h), httptest.NewServer(b.h)
	t.Cleanup(tsA.Close)
	t.Cleanup(tsB.Close)
	c := sdkClientOf(t, tsA.URL, tokens[0])
	if got := resultText(c.call(t, "alpha_echo", map[string]any{"text": "on a"})); got != "on a" {
		t.Fatalf("call: %q", got)
	}
	sid := c.session.ID()
	db.Close()
	if got := deleteSession(t, tsA.URL, tokens[0], sid); got != http.StatusInternalServerError {
		t.Errorf("DELETE with the state closed: status %d, want 500", got)
	}
	if got := post(t, tsA.URL, tokens[0], sid, listToolsMsg); got != http.StatusOK {
		t.Errorf("the session after a failed DELETE: status %d, want 200", got)
	}
	if got := post(t, tsB.URL, tokens[0], sid, listToolsMsg); got != http.StatusNotFound {
		t.Errorf("a resume with the state closed: status %d, want 404", got)
	}
}

// A DELETE records in the shared state only an id some replica would
// resume for the principal that sends it: made-up ids and another
// principal's write nothing, so the table holds real sessions alone.
func TestEndedSessionsRecordOnlyResumableIDs(t *testing.T) {
	shared := memState(t).EndedSessions()
	ids := newSealedIDs(RandomSessionKey())
	ids.shared = shared
	as := func(method, principal string) *http.Request {
		req := httptest.NewRequest(method, "/mcp", nil)
		return req.WithContext(frontdoor.WithPrincipal(req.Context(), principal))
	}
	id := ids.ResolveSessionIdManager(as(http.MethodPost, "token-abc")).Generate()
	recorded := func(id string) bool {
		t.Helper()
		ok, err := shared.Ended(t.Context(), sha256.Sum256([]byte(id)), time.Now())
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	for _, tc := range []struct{ id, principal string }{{"made-up", "token-abc"}, {id, "token-def"}} {
		if _, err := ids.ResolveSessionIdManager(as(http.MethodDelete, tc.principal)).Terminate(tc.id); err != nil {
			t.Fatalf("DELETE %q as %s: %v", tc.id, tc.principal, err)
		}
		if recorded(tc.id) {
			t.Errorf("DELETE %q as %s was recorded", tc.id, tc.principal)
		}
	}
	if _, err := ids.ResolveSessionIdManager(as(http.MethodDelete, "token-abc")).Terminate(id); err != nil {
		t.Fatal(err)
	}
	if !recorded(id) {
		t.Error("the session's own DELETE was not recorded")
	}
	if _, err := newSealedIDs(ids.key).open(t.Context(), id, "token-abc"); err != nil {
		t.Errorf("a process without the shared state: %v, want it resumed", err)
	}
	other := newSealedIDs(ids.key)
	other.shared = shared
	if _, err := other.open(t.Context(), id, "token-abc"); err != errSessionEnded {
		t.Errorf("a process with the shared state: %v, want %v", err, errSessionEnded)
	}
}

// SEC-06: two sessions opened by the same client with the same initialize
// get different ids (each seals random bytes of its own).
func TestSEC06SealedIDsDiffer(t *testing.T) {
	ids := newSealedIDs(RandomSessionKey())
	req := httptest.NewRequest(http.MethodPost, "/mcp", nil)
	a, b := ids.ResolveSessionIdManager(req).Generate(), ids.ResolveSessionIdManager(req).Generate()
	if a == b {
		t.Errorf("two sessions share the id %q", a)
	}
}
