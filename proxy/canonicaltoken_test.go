package proxy

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcp-router/mcp-router/proxy/frontdoor"
	"github.com/mcp-router/mcp-router/routing"
)

// respellings are other spellings of the base64 text s: the same bytes
// (or, for the case change, a near miss) written with padding, the
// standard alphabet, line breaks, set trailing bits, or another case.
func respellings(s string) map[string]string {
	out := map[string]string{
		"padded":       s + strings.Repeat("=", max(1, (4-len(s)%4)%4)),
		"line break":   s[:len(s)/2] + "\n" + s[len(s)/2:],
		"carriage ret": s[:len(s)/2] + "\r\n" + s[len(s)/2:],
		"std alphabet": strings.NewReplacer("-", "+", "_", "/").Replace(s) + "-",
		"upper case":   strings.ToUpper(s),
	}
	if tb := withTrailingBit(s); tb != "" {
		out["trailing bit"] = tb
	}
	return out
}

// withTrailingBit returns s with the lowest unused bit of its last
// character set, which encoding/base64 decodes to the same bytes unless
// strict; "" when s has no unused bits.
func withTrailingBit(s string) string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	if len(s)%4 < 2 {
		return ""
	}
	i := strings.IndexByte(alphabet, s[len(s)-1])
	return s[:len(s)-1] + string(alphabet[i|1])
}

// A sealed session id has one spelling: every other spelling of the same
// bytes is refused, so a session ended by DELETE cannot be resumed under
// another spelling of its id (metatools checks the same of a handle).
func TestCanonicalTokenSealedID(t *testing.T) {
	ids := newSealedIDs(RandomSessionKey())
	var id string
	for name := "c"; withTrailingBit(id) == ""; name += "c" { // the id's length follows the client's name
		req, _ := http.NewRequest(http.MethodPost, "/mcp", strings.NewReader(initializeNamed(name)))
		id = ids.ResolveSessionIdManager(req).Generate()
	}
	if _, err := base64.RawURLEncoding.DecodeString(withTrailingBit(id)); err != nil {
		t.Fatalf("the trailing-bit spelling does not decode leniently: %v", err)
	}
	ids.ResolveSessionIdManager(httptest.NewRequest(http.MethodDelete, "/mcp", nil)).Terminate(id)
	for name, v := range respellings(id) {
		if _, err := ids.open(t.Context(), v, LocalPrincipal); err == nil {
			t.Errorf("session id spelled with %s: resumed after DELETE, want refused", name)
		}
	}
}

// Over HTTP, on the replica that got the DELETE: the id with a trailing
// bit set is the same bytes, and gets 404 like the id itself.
func TestCanonicalTokenEndedSessionRespelled(t *testing.T) {
	tokens := []string{"token-of-ann"}
	a := newReplica(t, RandomSessionKey(), tokens)
	ts := httptest.NewServer(a.h)
	t.Cleanup(ts.Close)
	var sid string
	for name := "c"; withTrailingBit(sid) == ""; name += "c" {
		sid = openSession(t, ts.URL, tokens[0], name)
	}
	if got := deleteSession(t, ts.URL, tokens[0], sid); got != http.StatusOK {
		t.Fatalf("DELETE: %d", got)
	}
	if got := post(t, ts.URL, tokens[0], withTrailingBit(sid), listToolsMsg); got != http.StatusNotFound {
		t.Errorf("the deleted session respelled: status %d, want 404", got)
	}
}

// A session resumed from its sealed id on another replica counts to its
// client's sessions there like one opened there: past
// MaxSessionsPerClient, the resume is refused (429).
func TestCanonicalTokenResumeCountsToSessionBound(t *testing.T) {
	key := RandomSessionKey()
	tokens := []string{"token-of-ann"}
	a := newReplica(t, key, tokens)
	srvB := NewServer(ServerOptions{Hub: startHub(t, builtinFake("alpha")), SessionKey: key, Router: routing.NewRouter(routing.RouterOptions{})})
	t.Cleanup(srvB.Close)
	b := frontdoor.Guard(srvB.HTTPHandler(), frontdoor.Options{BearerTokens: tokens, SessionOwner: srvB.SessionOwner, MaxSessionsPerClient: 1})
	tsA, tsB := httptest.NewServer(a.h), httptest.NewServer(b)
	t.Cleanup(tsA.Close)
	t.Cleanup(tsB.Close)
	first, second := sdkClientOf(t, tsA.URL, tokens[0]), sdkClientOf(t, tsA.URL, tokens[0])
	if got := post(t, tsB.URL, tokens[0], first.session.ID(), listToolsMsg); got != http.StatusOK {
		t.Fatalf("the first session resumed on the second replica: status %d, want 200", got)
	}
	if got := post(t, tsB.URL, tokens[0], second.session.ID(), listToolsMsg); got != http.StatusTooManyRequests {
		t.Errorf("a second session resumed past max_sessions_per_client 1: status %d, want 429", got)
	}
}

// initializeNamed is an initialize request from a client called name.
func initializeNamed(name string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25",`+
		`"capabilities":{},"clientInfo":{"name":%q,"version":"1"}}}`, name)
}

// openSession opens a session with token as a client called name and
// returns its id.
func openSession(t *testing.T, url, token, name string) string {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, url+"/mcp", strings.NewReader(initializeNamed(name)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	sid := res.Header.Get("Mcp-Session-Id")
	if res.StatusCode != http.StatusOK || sid == "" {
		t.Fatalf("initialize: status %d, session id %q", res.StatusCode, sid)
	}
	if got := post(t, url, token, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); got != http.StatusAccepted {
		t.Fatalf("notifications/initialized: status %d", got)
	}
	return sid
}
