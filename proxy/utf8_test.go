package proxy

import (
	"bytes"
	"net/http"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"
)

// TestInvalidUTF8ReplacedBeforeUpstream sends a tools/call whose argument
// holds bytes that are not UTF-8, over stdio and over HTTP, and checks the
// body that reaches a real HTTP upstream: the bytes are replaced with
// U+FFFD, never forwarded raw (tool arguments are forwarded as the client
// wrote them, so nothing else re-encodes them).
func TestInvalidUTF8ReplacedBeforeUpstream(t *testing.T) {
	var mu sync.Mutex
	var bodies [][]byte
	up := tappedHTTPFake(t, "u8", func(body []byte, _ *http.Request) {
		if bytes.Contains(body, []byte(`"tools/call"`)) {
			mu.Lock()
			bodies = append(bodies, body)
			mu.Unlock()
		}
	})
	srv := newBIServer(t, startHubWith(t, Options{Upstreams: []UpstreamConfig{up}}))
	// 0xff, a lone continuation byte, a truncated 3-byte sequence, and an
	// overlong encoding of '/': none is UTF-8.
	const bad = "a\xffb\x80c\xe2\x82d\xc0\xafe"
	call := "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"u8_echo\"," +
		"\"arguments\":{\"text\":\"" + bad + "\"}}}"
	want := strings.ToValidUTF8(bad, "\uFFFD")
	check := func(t *testing.T, res rpcMsg) {
		t.Helper()
		if got := res.tool(t).text(); got != want {
			t.Errorf("echo: got %q, want %q", got, want)
		}
		mu.Lock()
		defer mu.Unlock()
		if len(bodies) == 0 {
			t.Fatal("no tools/call reached the upstream")
		}
		last := bodies[len(bodies)-1]
		if !utf8.Valid(last) {
			t.Errorf("the upstream was sent invalid UTF-8: %q", last)
		}
		if !bytes.Contains(last, []byte(want)) && !bytes.Contains(last, []byte(`a\ufffdb`)) {
			t.Errorf("the upstream got %q, want the text with U+FFFD in place of each bad run", last)
		}
	}
	t.Run("stdio", func(t *testing.T) {
		c := serveRawStdio(t, srv)
		c.initialize(t, `{}`)
		c.send(t, call)
		check(t, c.await(t, "1"))
		c.sync(t)
	})
	t.Run("http", func(t *testing.T) {
		g := serveRawHTTP(t, srv)
		h := inSession(g.initialize(t, nil))
		check(t, g.post(t, call, h).reply(t))
	})
}
