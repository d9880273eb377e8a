package frontdoor

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"testing"
)

func mustProxies(t *testing.T, entries ...string) []netip.Prefix {
	t.Helper()
	var out []netip.Prefix
	for _, e := range entries {
		p, err := ParseTrustedProxy(e)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}

// The client's address is the peer's unless the peer is trusted; then it
// is the rightmost forwarded address that is not trusted, and what a
// client wrote to the left of that is never believed.
func TestClientAddr(t *testing.T) {
	const proxy = "10.0.0.1:5000"
	many := strings.Repeat("10.0.0.3, ", 5000) // more hops than are read
	for _, tc := range []struct {
		name, peer string
		hdr        http.Header
		client     string
		via        string
	}{
		{"no header", proxy, nil, "10.0.0.1", ""},
		{"untrusted peer's header is ignored", "198.51.100.7:1",
			http.Header{"X-Forwarded-For": {"203.0.113.9"}}, "198.51.100.7", ""},
		{"trusted peer", proxy, http.Header{"X-Forwarded-For": {"203.0.113.9"}}, "203.0.113.9", "10.0.0.1"},
		{"a client's own X-Forwarded-For is not believed", proxy,
			http.Header{"X-Forwarded-For": {"192.0.2.66, 203.0.113.9"}}, "203.0.113.9", "10.0.0.1"},
		{"a chain of trusted proxies", proxy,
			http.Header{"X-Forwarded-For": {"192.0.2.66, 203.0.113.9, 10.9.9.9"}}, "203.0.113.9", "10.0.0.1"},
		{"header lines in order", proxy,
			http.Header{"X-Forwarded-For": {"192.0.2.66", "203.0.113.9, 10.2.2.2"}}, "203.0.113.9", "10.0.0.1"},
		{"empty entries skipped", proxy, http.Header{"X-Forwarded-For": {"203.0.113.9, , ", ""}}, "203.0.113.9", "10.0.0.1"},
		{"with a port", proxy, http.Header{"X-Forwarded-For": {"203.0.113.9:443"}}, "203.0.113.9", "10.0.0.1"},
		{"IPv6", "[fd00::1]:80", http.Header{"X-Forwarded-For": {"2001:db8::17"}}, "2001:db8::17", "fd00::1"},
		{"IPv6 with a port", proxy, http.Header{"X-Forwarded-For": {"[2001:db8::17]:4711"}}, "2001:db8::17", "10.0.0.1"},
		{"IPv4 in IPv6", proxy, http.Header{"X-Forwarded-For": {"::ffff:203.0.113.9"}}, "203.0.113.9", "10.0.0.1"},
		{"malformed: the proxy's", proxy, http.Header{"X-Forwarded-For": {"203.0.113.9, not-an-ip"}}, "10.0.0.1", ""},
		{"malformed left of the client: not read", proxy,
			http.Header{"X-Forwarded-For": {"not-an-ip, 203.0.113.9"}}, "203.0.113.9", "10.0.0.1"},
		{"an entry too long", proxy,
			http.Header{"X-Forwarded-For": {strings.Repeat("1", 100)}}, "10.0.0.1", ""},
		{"a zone", proxy, http.Header{"X-Forwarded-For": {"fe80::1%eth0"}}, "10.0.0.1", ""},
		{"too many hops: the last trusted one read", proxy,
			http.Header{"X-Forwarded-For": {"203.0.113.9, " + many + "10.0.0.3"}}, "10.0.0.3", "10.0.0.1"},
		{"Forwarded", proxy, http.Header{"Forwarded": {"for=192.0.2.66, for=203.0.113.9;proto=https;by=10.0.0.1"}},
			"203.0.113.9", "10.0.0.1"},
		{"Forwarded IPv6 quoted", proxy, http.Header{"Forwarded": {`For="[2001:db8:cafe::17]:4711"`}},
			"2001:db8:cafe::17", "10.0.0.1"},
		{"Forwarded unknown", proxy, http.Header{"Forwarded": {"for=unknown"}}, "10.0.0.1", ""},
		{"Forwarded obfuscated", proxy, http.Header{"Forwarded": {"for=_hidden"}}, "10.0.0.1", ""},
		{"Forwarded without for", proxy, http.Header{"Forwarded": {"proto=https"}}, "10.0.0.1", ""},
		{"an empty X-Forwarded-For: Forwarded", proxy,
			http.Header{"X-Forwarded-For": {" "}, "Forwarded": {"for=203.0.113.9"}}, "203.0.113.9", "10.0.0.1"},
		{"X-Forwarded-For over Forwarded", proxy,
			http.Header{"X-Forwarded-For": {"203.0.113.9"}, "Forwarded": {"for=192.0.2.66"}}, "203.0.113.9", "10.0.0.1"},
		{"a peer that is no IP", "@", http.Header{"X-Forwarded-For": {"203.0.113.9"}}, "@", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := Guard(nil, Options{TrustedProxies: mustProxies(t, "10.0.0.0/8", "fd00::1")}).(*guard)
			r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", nil)
			r.RemoteAddr = tc.peer
			r.Header = tc.hdr
			if r.Header == nil {
				r.Header = http.Header{}
			}
			client, via := g.clientAddr(r)
			if client != tc.client || via != tc.via {
				t.Errorf("got client %q via %q, want %q via %q", client, via, tc.client, tc.via)
			}
		})
	}
}

// Without trusted proxies, no header is read, whoever the peer is.
func TestClientAddrTrustsNobodyByDefault(t *testing.T) {
	g := Guard(nil, Options{}).(*guard)
	r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", nil)
	r.RemoteAddr = "127.0.0.1:5000"
	r.Header.Set("X-Forwarded-For", "203.0.113.9")
	r.Header.Set("Forwarded", "for=203.0.113.9")
	if client, via := g.clientAddr(r); client != "127.0.0.1" || via != "" {
		t.Errorf("got client %q via %q, want 127.0.0.1 alone", client, via)
	}
}

func TestParseTrustedProxy(t *testing.T) {
	for in, want := range map[string]string{
		"10.0.0.5": "10.0.0.5/32", "10.1.2.3/8": "10.0.0.0/8", "fd00::1": "fd00::1/128", "fd00::/8": "fd00::/8",
		"::ffff:10.0.0.5": "10.0.0.5/32", " 192.0.2.1 ": "192.0.2.1/32",
	} {
		p, err := ParseTrustedProxy(in)
		if err != nil || p.String() != want {
			t.Errorf("ParseTrustedProxy(%q): got %v, %v, want %s", in, p, err, want)
		}
	}
	for _, in := range []string{"", "nginx", "10.0.0.0/33", "fe80::1%eth0", "10.0.0.0/8/8", "::ffff:10.0.0.0/104", "*"} {
		if p, err := ParseTrustedProxy(in); err == nil {
			t.Errorf("ParseTrustedProxy(%q): got %v, want an error", in, p)
		}
	}
}

// tryForwarded sends one request with token through a proxy at peer,
// which forwards it for xff.
func tryForwarded(h http.Handler, peer, xff, token string) int {
	r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", nil)
	r.RemoteAddr = peer
	r.Header.Set("X-Forwarded-For", xff)
	r.Header.Set("Authorization", "Bearer "+token)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w.Code
}

// Behind a trusted proxy, the wrong-token limit holds per client: one
// client guessing tokens does not lock out another behind the same proxy,
// and cannot escape its own limit by writing X-Forwarded-For itself. From
// a peer that is not trusted, X-Forwarded-For changes nothing.
func TestWrongTokensLimitedPerClientBehindProxy(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	h := Guard(ok, Options{BearerTokens: []string{"right"}, TrustedProxies: mustProxies(t, "10.0.0.1")})
	const proxy, guesser, other = "10.0.0.1:40000", "203.0.113.9", "203.0.113.10"

	for i := range DefaultTokenFailures {
		// The guesser names another address in every request; the proxy
		// appends the guesser's own.
		spoofed := "192.0.2." + strconv.Itoa(i) + ", " + guesser
		if got := tryForwarded(h, proxy, spoofed, "wrong"); got != http.StatusUnauthorized {
			t.Fatalf("wrong token %d: got %d, want 401", i+1, got)
		}
	}
	if got := tryForwarded(h, proxy, guesser, "right"); got != http.StatusTooManyRequests {
		t.Errorf("the guesser, right token: got %d, want 429", got)
	}
	if got := tryForwarded(h, proxy, other+", "+"10.0.0.1", "right"); got != http.StatusNoContent {
		t.Errorf("another client behind the same proxy: got %d, want 204", got)
	}

	// An untrusted peer: whatever it forwards for, it counts as itself.
	const direct = "198.51.100.7:1"
	for i := range DefaultTokenFailures {
		if got := tryForwarded(h, direct, "192.0.2."+strconv.Itoa(i), "wrong"); got != http.StatusUnauthorized {
			t.Fatalf("direct wrong token %d: got %d, want 401", i+1, got)
		}
	}
	if got := tryForwarded(h, direct, "192.0.2.200", "right"); got != http.StatusTooManyRequests {
		t.Errorf("the untrusted peer naming a fresh address: got %d, want 429", got)
	}
	if got := tryForwarded(h, proxy, "192.0.2.200", "right"); got != http.StatusNoContent {
		t.Errorf("the address it named, through the proxy: got %d, want 204", got)
	}
}

// Sessions per client, without tokens, count per forwarded client.
func TestSessionsPerClientBehindProxy(t *testing.T) {
	g := newGuarded(t, Options{MaxSessionsPerClient: 1, TrustedProxies: mustProxies(t, "127.0.0.1")})
	alice := map[string]string{"X-Forwarded-For": "203.0.113.9"}
	g.initialize(t, alice)
	wantRefusal(t, g.post(t, initializeBody, alice), http.StatusTooManyRequests, "sessions open")
	g.initialize(t, map[string]string{"X-Forwarded-For": "203.0.113.10"})
}

// A refusal's log line names the client, and the proxy it came through.
func TestRefusalLogNamesForwardedClient(t *testing.T) {
	var buf bytes.Buffer
	h := Guard(nil, Options{BearerTokens: []string{"right"}, TrustedProxies: mustProxies(t, "10.0.0.0/8"),
		Logger: slog.New(slog.NewTextHandler(&buf, nil))})
	if got := tryForwarded(h, "10.0.0.1:40000", "203.0.113.9", "wrong"); got != http.StatusUnauthorized {
		t.Fatalf("got %d, want 401", got)
	}
	out := buf.String()
	for _, want := range []string{"remote_addr=203.0.113.9 ", "proxy_addr=10.0.0.1:40000"} {
		if !strings.Contains(out, want) {
			t.Errorf("log %q lacks %q", out, want)
		}
	}
}

// Whatever the forwarding headers hold, the client's address is the
// peer's or one of the addresses written in them, and a peer that is not
// trusted is always its own client.
func FuzzClientAddr(f *testing.F) {
	for _, seed := range [][2]string{
		{"203.0.113.9", ""}, {"192.0.2.1, 10.0.0.2", ""}, {"", "for=203.0.113.9;proto=https"},
		{"[2001:db8::1]:80, ,", `for="[2001:db8::17]:4711", for=_x`}, {"not-an-ip", "for=unknown"},
	} {
		f.Add(seed[0], seed[1])
	}
	g := Guard(nil, Options{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}}).(*guard)
	f.Fuzz(func(t *testing.T, xff, fwd string) {
		for _, peer := range []string{"10.0.0.1:1", "198.51.100.7:1"} {
			r := httptest.NewRequest(http.MethodGet, "http://127.0.0.1/mcp", nil)
			r.RemoteAddr = peer
			r.Header.Set("X-Forwarded-For", xff)
			r.Header.Set("Forwarded", fwd)
			client, via := g.clientAddr(r)
			peerAddr, _, _ := strings.Cut(peer, ":")
			if peer == "198.51.100.7:1" && (client != peerAddr || via != "") {
				t.Fatalf("untrusted peer %s counted as %q via %q", peer, client, via)
			}
			if via == "" && client != peerAddr {
				t.Fatalf("client %q without a proxy, peer %s", client, peer)
			}
			if via != "" {
				a, err := netip.ParseAddr(client)
				if err != nil || via != peerAddr {
					t.Fatalf("client %q via %q: want an address via %s", client, via, peerAddr)
				}
				if !strings.Contains(xff+fwd, strings.Split(a.String(), ":")[0]) && !a.Is6() {
					t.Fatalf("client %s not written in the headers %q %q", a, xff, fwd)
				}
			}
		}
	})
}
