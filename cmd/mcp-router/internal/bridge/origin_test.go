package bridge

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// TestCredentialAudienceConnectRedirect: a gateway URL that redirects to
// another origin gets no token, no --header value and no body there; the
// client hears why, and no error text holds the token, a header's value
// or the URL's userinfo and query.
func TestCredentialAudienceConnectRedirect(t *testing.T) {
	var reached atomic.Int32
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"x","version":"1"}}}`))
	}))
	t.Cleanup(elsewhere.Close)
	gateway := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/echo" { // an error that quotes what it was sent
			http.Error(w, "bad token "+r.Header.Get("Authorization")+" and "+r.Header.Get("X-Team"), http.StatusBadRequest)
			return
		}
		http.Redirect(w, r, elsewhere.URL+"/mcp", http.StatusTemporaryRedirect)
	}))
	t.Cleanup(gateway.Close)
	const token, team = "tok-0123456789abcdef", "team-secret-4242"
	header := http.Header{"Authorization": {"Bearer " + token}, "X-Team": {team}}
	for _, tt := range []struct{ name, url, want string }{
		{"cross-origin redirect", strings.Replace(gateway.URL, "http://", "http://user:pw-secret-1@", 1) + "/mcp?key=q-secret-99", "another origin"},
		{"error quoting the credentials", gateway.URL + "/echo", "HTTP 400"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := startBridge(t, Options{URL: tt.url, Header: header.Clone()})
			s.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
			msg := errorMessage(s.next())
			if !strings.Contains(msg, tt.want) {
				t.Errorf("error: got %q, want it to say %q", msg, tt.want)
			}
			for _, secret := range []string{token, team, "pw-secret-1", "q-secret-99"} {
				if strings.Contains(msg, secret) {
					t.Errorf("error %q holds %q", msg, secret)
				}
			}
		})
	}
	if n := reached.Load(); n != 0 {
		t.Errorf("the other origin was reached %d times, want none", n)
	}
}
