package frontdoor

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcp-router/mcp-router/internal/fakeupstream"
	"github.com/mcp-router/mcp-router/proxy/internal/rawhttp"
)

// guarded is a fake upstream served over streamable HTTP behind Guard on
// a real loopback listener. It records the requests that got past Guard.
type guarded struct {
	URL    string // http://127.0.0.1:port/mcp
	client *http.Client

	mu   sync.Mutex
	seen []*http.Request // headers and sizes of what reached mcp-go
	body []int
}

// newGuarded starts the server and closes it when the test ends. Without
// mcpOpts, mcp-go runs with the options of Server.HTTPHandler.
func newGuarded(t *testing.T, opts Options, mcpOpts ...server.StreamableHTTPOption) *guarded {
	t.Helper()
	if mcpOpts == nil {
		mcpOpts = []server.StreamableHTTPOption{
			server.WithStreamableHTTPProtocolVersions("2025-11-25", "2025-06-18", "2025-03-26"),
		}
	}
	mcpOpts = append(mcpOpts, server.WithEndpointPath("/mcp"),
		server.WithStreamableHTTPLogger(slog.New(slog.DiscardHandler)))
	mcpHTTP := server.NewStreamableHTTPServer(fakeupstream.New("fake"), mcpOpts...)
	g := &guarded{}
	inner := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		g.mu.Lock()
		g.seen = append(g.seen, r.Clone(r.Context()))
		g.body = append(g.body, len(body))
		g.mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(body))
		mcpHTTP.ServeHTTP(w, r)
	})
	ts := httptest.NewServer(Guard(inner, opts))
	t.Cleanup(func() {
		_ = mcpHTTP.Shutdown(t.Context())
		ts.Close()
	})
	g.URL = ts.URL + "/mcp"
	g.client = ts.Client()
	return g
}

// reached returns how many requests got past Guard.
func (g *guarded) reached() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.seen)
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

// do is post without a *testing.T, for other goroutines.
func (g *guarded) do(ctx context.Context, body string, hdr map[string]string) (guardReply, error) {
	r, err := g.raw().Do(ctx, body, hdr)
	return replyOf(r), err
}

// The table of docker mcp-gateway's TestIsAllowedOrigin.
func TestSEC01OriginValidation(t *testing.T) {
	g := newGuarded(t, Options{AllowedOrigins: []string{"https://app.example.com"}})
	allowed := []string{
		"http://localhost", "http://localhost:3000", "https://localhost:8443",
		"http://127.0.0.1", "https://127.0.0.1:8443", "http://127.0.0.5:9",
		"http://[::1]:8080", "https://[::1]",
		"https://app.example.com", // configured
	}
	for _, origin := range allowed {
		t.Run("allowed "+origin, func(t *testing.T) {
			r := g.post(t, initializeBody, map[string]string{"Origin": origin})
			if r.status != http.StatusOK {
				t.Fatalf("got %d %s, want 200", r.status, r.body)
			}
			if got := r.header.Get("Access-Control-Allow-Origin"); got != origin {
				t.Errorf("Access-Control-Allow-Origin: got %q, want %q", got, origin)
			}
			if got := r.header.Get("Access-Control-Expose-Headers"); !strings.Contains(got, "Mcp-Session-Id") {
				t.Errorf("Access-Control-Expose-Headers: got %q, want Mcp-Session-Id in it", got)
			}
		})
	}
	t.Run("no Origin header", func(t *testing.T) {
		r := g.post(t, initializeBody, nil)
		if r.status != http.StatusOK {
			t.Fatalf("got %d %s, want 200", r.status, r.body)
		}
		if got := r.header.Get("Access-Control-Allow-Origin"); got != "" {
			t.Errorf("Access-Control-Allow-Origin: got %q, want none", got)
		}
	})
	rejected := []string{
		"https://evil.com", "http://localhost.evil.com", "http://127.0.0.1.evil.com",
		"http://0.0.0.0:8080", "http://[::]:8080", "ftp://localhost", "ws://localhost",
		"file://localhost", "not-a-url", "localhost:8080", "http:/localhost", "", "null",
		"http://user@localhost", "http://localhost/path", "http://localhost:99999",
		"https://app.example.com:444", "http://app.example.com",
	}
	before := g.reached()
	for _, origin := range rejected {
		t.Run("rejected "+origin, func(t *testing.T) {
			r := g.post(t, initializeBody, map[string]string{"Origin": origin})
			wantRefusal(t, r, http.StatusForbidden, "origin not allowed")
			if got := r.header.Get("Access-Control-Allow-Origin"); got != "" {
				t.Errorf("Access-Control-Allow-Origin: got %q, want none", got)
			}
		})
	}
	if got := g.reached() - before; got != 0 {
		t.Errorf("rejected origins reached the MCP server %d times, want 0", got)
	}
}

func TestSEC01CORSPreflight(t *testing.T) {
	g := newGuarded(t, Options{BearerTokens: []string{"tok"}})
	preflight := func(origin string) guardReply {
		return g.send(t, http.MethodOptions, nil, map[string]string{
			"Origin": origin, "Access-Control-Request-Method": "POST",
			"Access-Control-Request-Headers": "authorization, content-type, mcp-session-id, mcp-protocol-version",
		})
	}
	r := preflight("http://localhost:5173")
	if r.status != http.StatusNoContent {
		t.Fatalf("preflight without a token: got %d %s, want 204", r.status, r.body)
	}
	got := map[string]string{}
	for _, k := range []string{"Access-Control-Allow-Origin", "Access-Control-Allow-Methods", "Access-Control-Expose-Headers"} {
		got[k] = r.header.Get(k)
	}
	want := map[string]string{
		"Access-Control-Allow-Origin":   "http://localhost:5173",
		"Access-Control-Allow-Methods":  corsAllowMethods,
		"Access-Control-Expose-Headers": corsExposeHeaders,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("preflight headers (-want +got):\n%s", diff)
	}
	allow := r.header.Get("Access-Control-Allow-Headers")
	for _, h := range []string{"Authorization", "Content-Type", "Mcp-Session-Id", "MCP-Protocol-Version", "Last-Event-ID"} {
		if !strings.Contains(allow, h) {
			t.Errorf("Access-Control-Allow-Headers %q lacks %s", allow, h)
		}
	}
	wantRefusal(t, preflight("https://evil.com"), http.StatusForbidden, "origin not allowed")
	if g.reached() != 0 {
		t.Errorf("preflights reached the MCP server %d times, want 0", g.reached())
	}

	// A browser on an allowed origin can read a 401: it carries CORS headers.
	r = g.post(t, initializeBody, map[string]string{"Origin": "http://localhost:5173"})
	wantRefusal(t, r, http.StatusUnauthorized, "bearer token")
	if got := r.header.Get("Access-Control-Allow-Origin"); got != "http://localhost:5173" {
		t.Errorf("401 Access-Control-Allow-Origin: got %q, want the origin", got)
	}
}

func TestSEC02HostValidation(t *testing.T) {
	// mcp-go's own DNS-rebinding check would refuse mcp.example.com on a
	// loopback listener; Guard's check replaces it.
	g := newGuarded(t, Options{AllowedHosts: []string{"mcp.example.com"}},
		server.WithDisableLocalhostProtection(true))
	for _, host := range []string{"localhost", "localhost:1234", "LOCALHOST:80", "127.0.0.1:9", "127.9.9.9", "[::1]:8080", "[::1]", "mcp.example.com", "mcp.example.com:443"} {
		t.Run("allowed "+host, func(t *testing.T) {
			if r := g.post(t, initializeBody, map[string]string{"Host": host}); r.status != http.StatusOK {
				t.Fatalf("got %d %s, want 200", r.status, r.body)
			}
		})
	}
	before := g.reached()
	for _, host := range []string{"evil.com", "evil.com:80", "localhost.evil.com", "127.0.0.1.nip.io", "0.0.0.0:8080", "[::]:80", "192.168.1.5", "example.com"} {
		t.Run("rejected "+host, func(t *testing.T) {
			wantRefusal(t, g.post(t, initializeBody, map[string]string{"Host": host}), http.StatusForbidden, "host not allowed")
		})
	}
	if got := g.reached() - before; got != 0 {
		t.Errorf("rejected hosts reached the MCP server %d times, want 0", got)
	}
}

func TestSEC03CheckListen(t *testing.T) {
	none := Options{}
	for _, addr := range []string{"127.0.0.1:8080", "[::1]:0", "localhost:9", "LOCALHOST:9", "127.0.0.2:80"} {
		if err := CheckListen(addr, none); err != nil {
			t.Errorf("CheckListen(%q, no auth): got %v, want nil", addr, err)
		}
	}
	for _, addr := range []string{"0.0.0.0:8080", ":8080", "192.168.1.5:80", "[::]:80", "myhost:80"} {
		err := CheckListen(addr, none)
		if err == nil || !strings.Contains(err.Error(), "http.bearer_tokens") {
			t.Errorf("CheckListen(%q, no auth): got %v, want an error naming http.bearer_tokens", addr, err)
		}
		if err := CheckListen(addr, Options{BearerTokens: []string{"  "}, Tokens: []Token{{Token: " ", Profile: "p"}}}); err == nil {
			t.Errorf("CheckListen(%q, blank tokens): got nil, want an error", addr)
		}
		for name, opts := range map[string]Options{
			"token":         {BearerTokens: []string{"s3cret"}},
			"profile token": {Tokens: []Token{{Token: "s3cret", Profile: "p"}}},
			"issuer":        {OIDC: NewIssuer(OIDCOptions{Issuer: "https://issuer.example", Resource: "https://gw.example/mcp"})},
		} {
			if err := CheckListen(addr, opts); err != nil {
				t.Errorf("CheckListen(%q, %s): got %v, want nil", addr, name, err)
			}
		}
	}
	if err := CheckListen("127.0.0.1", none); err == nil {
		t.Error("CheckListen without a port: got nil, want an error")
	}
}

func TestSEC04BearerToken(t *testing.T) {
	const token = "right-token-0123456789"
	g := newGuarded(t, Options{BearerTokens: []string{"other-token", token}})
	cases := []struct {
		name, auth string
	}{
		{"none", ""},
		{"wrong", "Bearer wrong-token"},
		{"prefix of the right one", "Bearer right-token"},
		{"right one with a suffix", "Bearer " + token + "x"},
		{"other scheme", "Basic " + token},
		{"scheme only", "Bearer"},
		{"empty token", "Bearer "},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			hdr := map[string]string{}
			if c.auth != "" {
				hdr["Authorization"] = c.auth
			}
			r := g.post(t, initializeBody, hdr)
			wantRefusal(t, r, http.StatusUnauthorized, "bearer token")
			if got := r.header.Get("WWW-Authenticate"); !strings.HasPrefix(got, "Bearer") {
				t.Errorf("WWW-Authenticate: got %q, want Bearer", got)
			}
		})
	}
	if g.reached() != 0 {
		t.Fatalf("unauthorized requests reached the MCP server %d times, want 0", g.reached())
	}
	for _, auth := range []string{"Bearer " + token, "bearer " + token, "Bearer other-token"} {
		sid := g.initialize(t, map[string]string{"Authorization": auth})
		hdr := inSession(sid)
		hdr["Authorization"] = auth
		if r := g.post(t, toolsListBody, hdr); r.status != http.StatusOK {
			t.Errorf("tools/list with %q: got %d %s, want 200", auth[:6], r.status, r.body)
		}
	}
	g.wantNoAuthorization(t)
}

// wantNoAuthorization checks that no request reached mcp-go with the
// client's credentials (SEC-05).
func (g *guarded) wantNoAuthorization(t *testing.T) {
	t.Helper()
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.seen) == 0 {
		t.Fatal("no request reached the MCP server")
	}
	for _, r := range g.seen {
		if v := r.Header.Values("Authorization"); len(v) > 0 {
			t.Errorf("%s reached the MCP server with Authorization %q, want none", r.Method, v)
		}
		if v := r.Header.Values("Proxy-Authorization"); len(v) > 0 {
			t.Errorf("%s reached the MCP server with Proxy-Authorization %q, want none", r.Method, v)
		}
	}
}

// A real mcp-go client with the token gets through and calls a tool.
func TestSEC04ClientWithToken(t *testing.T) {
	const token = "client-token"
	g := newGuarded(t, Options{BearerTokens: []string{token}})
	c, err := client.NewStreamableHttpClient(g.URL,
		transport.WithHTTPBasicClient(g.client),
		transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + token}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Initialize(t.Context(), mcp.InitializeRequest{Params: mcp.InitializeParams{
		ProtocolVersion: "2025-06-18", ClientInfo: mcp.Implementation{Name: "guard-test", Version: "1"},
	}}); err != nil {
		t.Fatalf("Initialize: %v", err)
	}
	res, err := c.CallTool(t.Context(), mcp.CallToolRequest{Params: mcp.CallToolParams{
		Name: "echo", Arguments: map[string]any{"text": "through the guard"},
	}})
	if err != nil || res.IsError || len(res.Content) == 0 {
		t.Fatalf("CallTool echo: got %v, %+v", err, res)
	}
	if text, _ := res.Content[0].(mcp.TextContent); text.Text != "through the guard" {
		t.Errorf("echo: got %+v, want the text back", res.Content[0])
	}
	g.wantNoAuthorization(t)
}

// Docker's TestCombinedSecurityLayers: each layer refuses what the one
// after it would, so the first failing check decides the answer.
func TestSEC04CheckOrder(t *testing.T) {
	g := newGuarded(t, Options{BearerTokens: []string{"tok"}, MaxBodyBytes: 1024})
	big := strings.Repeat("x", 2048)
	cases := []struct {
		name   string
		hdr    map[string]string
		status int
		reason string
	}{
		{"bad host first", map[string]string{"Host": "evil.com", "Origin": "https://evil.com"}, 403, "host not allowed"},
		{"then bad origin", map[string]string{"Origin": "https://evil.com"}, 403, "origin not allowed"},
		{"then no token", map[string]string{"Origin": "http://localhost"}, 401, "bearer token"},
		{"then body size", map[string]string{"Origin": "http://localhost", "Authorization": "Bearer tok"}, 413, "request body larger than 1024 bytes"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			wantRefusal(t, g.post(t, big, c.hdr), c.status, c.reason)
		})
	}
	if g.reached() != 0 {
		t.Errorf("refused requests reached the MCP server %d times, want 0", g.reached())
	}
}

// Tokens are stripped even when the guard does not check them.
func TestSEC05NoTokenPassthrough(t *testing.T) {
	g := newGuarded(t, Options{})
	hdr := map[string]string{"Authorization": "Bearer client-secret", "Proxy-Authorization": "Basic eDp5"}
	sid := g.initialize(t, hdr)
	h := inSession(sid)
	h["Authorization"] = "Bearer client-secret"
	if r := g.post(t, toolsListBody, h); r.status != http.StatusOK {
		t.Fatalf("tools/list: got %d %s, want 200", r.status, r.body)
	}
	g.wantNoAuthorization(t)
}

var (
	uuidV4Session = regexp.MustCompile(`^mcp-session-[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
)

// SEC-06 as mcp-go ships it: ids are UUIDv4 from crypto/rand (google/uuid,
// 122 random bits), and two sessions get different ones.
func TestSEC06SessionIDsMCPGoDefault(t *testing.T) {
	g := newGuarded(t, Options{})
	a, b := g.initialize(t, nil), g.initialize(t, nil)
	for _, id := range []string{a, b} {
		if !uuidV4Session.MatchString(id) {
			t.Errorf("session id %q: want mcp-session-<UUIDv4>", id)
		}
	}
	if a == b {
		t.Errorf("two sessions share the id %q", a)
	}
}

// SEC-14: a refusal is logged on one line with the reason, and neither a
// token nor a control character from the client gets into it.
func TestSEC14RefusalLog(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	g := newGuarded(t, Options{BearerTokens: []string{"the-real-token"}, Logger: log})
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost,
		strings.TrimSuffix(g.URL, "/mcp")+"/mcp%0D%0Alevel=ERROR%20msg=forged%1B[31m", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer wrong-token-value")
	resp, err := g.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("got %d, want 401", resp.StatusCode)
	}
	out := buf.String()
	if strings.Count(out, "\n") != 1 || !strings.HasSuffix(out, "\n") {
		t.Errorf("log: got %q, want one line", out)
	}
	for _, bad := range []string{"\x1b", "\r", "wrong-token-value", "the-real-token"} {
		if strings.Contains(out, bad) {
			t.Errorf("log %q contains %q", out, bad)
		}
	}
	for _, want := range []string{"level=WARN", "reason=", "bearer token", "remote_addr=127.0.0.1:", "method=POST", `/mcp\\r\\nlevel=ERROR`} {
		if !strings.Contains(out, want) {
			t.Errorf("log %q lacks %q", out, want)
		}
	}
}

// FI-12: a 10 MiB body gets 413 before mcp-go reads it, with a known or
// an unknown length, and the server goes on answering.
func TestFI12OversizedBody(t *testing.T) {
	g := newGuarded(t, Options{})
	big := bytes.Repeat([]byte(" "), 10<<20)
	t.Run("Content-Length", func(t *testing.T) {
		r := g.send(t, http.MethodPost, bytes.NewReader(big), nil)
		wantRefusal(t, r, http.StatusRequestEntityTooLarge, "request body larger than 4194304 bytes")
	})
	t.Run("chunked", func(t *testing.T) {
		r := g.send(t, http.MethodPost, io.MultiReader(bytes.NewReader(big)), nil)
		wantRefusal(t, r, http.StatusRequestEntityTooLarge, "request body larger than 4194304 bytes")
	})
	if g.reached() != 0 {
		t.Fatalf("oversized bodies reached the MCP server %d times, want 0", g.reached())
	}
	sid := g.initialize(t, nil)
	if r := g.post(t, toolsListBody, inSession(sid)); r.status != http.StatusOK {
		t.Fatalf("tools/list after the 413s: got %d %s, want 200", r.status, r.body)
	}
}

// The limit is inclusive, and what passes reaches mcp-go whole.
func TestFI12BodyLimitEdge(t *testing.T) {
	g := newGuarded(t, Options{MaxBodyBytes: 256})
	body := initializeBody + strings.Repeat(" ", 256-len(initializeBody))
	if r := g.post(t, body, nil); r.status != http.StatusOK {
		t.Fatalf("body of exactly the limit: got %d %s, want 200", r.status, r.body)
	}
	wantRefusal(t, g.post(t, body+" ", nil), http.StatusRequestEntityTooLarge, "larger than 256 bytes")
	g.mu.Lock()
	defer g.mu.Unlock()
	if diff := cmp.Diff([]int{256}, g.body); diff != "" {
		t.Errorf("body sizes at the MCP server (-want +got):\n%s", diff)
	}
}

// BI-11: mcp-go refuses an unknown MCP-Protocol-Version after initialize.
func TestBI11ProtocolVersion(t *testing.T) {
	g := newGuarded(t, Options{})
	sid := g.initialize(t, nil)
	bad := map[string]string{server.HeaderKeySessionID: sid, "MCP-Protocol-Version": "1999-01-01"}
	for _, method := range []string{http.MethodPost, http.MethodGet, http.MethodDelete} {
		var body io.Reader
		if method == http.MethodPost {
			body = strings.NewReader(toolsListBody)
		}
		if r := g.send(t, method, body, bad); r.status != http.StatusBadRequest {
			t.Errorf("%s with 1999-01-01: got %d %s, want 400", method, r.status, r.body)
		}
	}
	if r := g.post(t, toolsListBody, inSession(sid)); r.status != http.StatusOK {
		t.Errorf("tools/list with 2025-06-18: got %d %s, want 200", r.status, r.body)
	}
}

// SEC-06: with several bearer tokens, a session belongs to the token that
// opened it: another token's requests for it, DELETE included, are
// answered as for an unknown session and never reach the MCP server, and
// the owner's session is unharmed.
func TestSEC06SessionBoundToItsToken(t *testing.T) {
	const alice, bob = "alice-token-0123456789", "bob-token-9876543210"
	g := newGuarded(t, Options{BearerTokens: []string{alice, bob}},
		server.WithStreamableHTTPProtocolVersions("2025-11-25"))
	as := func(token, sid string) map[string]string {
		hdr := inSession(sid)
		hdr["Authorization"] = "Bearer " + token
		return hdr
	}
	sid := g.initialize(t, map[string]string{"Authorization": "Bearer " + alice})
	reached := g.reached()
	if r := g.post(t, toolsListBody, as(bob, sid)); r.status != http.StatusNotFound {
		t.Errorf("bob using alice's session: got %d %s, want 404", r.status, r.body)
	}
	if r := g.send(t, http.MethodDelete, nil, as(bob, sid)); r.status != http.StatusNotFound {
		t.Errorf("bob deleting alice's session: got %d %s, want 404", r.status, r.body)
	}
	if n := g.reached() - reached; n != 0 {
		t.Errorf("%d of bob's requests for alice's session reached the MCP server, want 0", n)
	}
	if r := g.post(t, toolsListBody, as(alice, sid)); r.status != http.StatusOK {
		t.Errorf("alice in her session: got %d %s, want 200", r.status, r.body)
	}
	// Bob's own session works, and alice cannot use it either.
	bsid := g.initialize(t, map[string]string{"Authorization": "Bearer " + bob})
	if r := g.post(t, toolsListBody, as(bob, bsid)); r.status != http.StatusOK {
		t.Errorf("bob in his session: got %d %s, want 200", r.status, r.body)
	}
	if r := g.post(t, toolsListBody, as(alice, bsid)); r.status != http.StatusNotFound {
		t.Errorf("alice using bob's session: got %d %s, want 404", r.status, r.body)
	}
	// The owner's DELETE ends the session and its binding.
	if r := g.send(t, http.MethodDelete, nil, as(alice, sid)); r.status != http.StatusOK {
		t.Errorf("alice deleting her session: got %d %s, want 200", r.status, r.body)
	}
	if r := g.post(t, toolsListBody, as(alice, sid)); r.status != http.StatusNotFound {
		t.Errorf("alice after DELETE: got %d, want 404", r.status)
	}
}

// bindSession binds sid as the gateway does: a reservation for client,
// then the session in its place.
func bindSession(t *testing.T, o *owners, sid string, p principal, client string, now time.Time) {
	t.Helper()
	if !o.reserve(client, 0, now) {
		t.Fatalf("reserving a place for %s refused", sid)
	}
	o.bindReserved(sid, p, client, now)
}

// sessionsOf is how many sessions client has open.
func sessionsOf(o *owners, client string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	if c := o.clients[client]; c != nil {
		return c.sessions
	}
	return 0
}

// SEC-06: the session bindings are bounded: a binding unused for longer
// than sessions live idle goes when the next session is bound, unless a
// request of its session is in flight (a GET stream); an id never bound
// is refused.
func TestSEC06OwnersForgetIdleSessions(t *testing.T) {
	o := newOwners(time.Minute)
	p0, p1 := principal{name: "token-0"}, principal{name: "token-1"}
	t0 := time.Now()
	bindSession(t, o, "old", p0, "a", t0)
	bindSession(t, o, "kept", p1, "b", t0)
	bindSession(t, o, "streaming", p0, "a", t0)
	if o.enter("streaming", p0, true, 0, true, t0) != admitted {
		t.Fatal("the owner of a session was refused")
	}
	if o.enter("kept", p1, true, 0, false, t0.Add(50*time.Second)) != admitted || o.enter("kept", p0, true, 0, false, t0) != notFound ||
		o.enter("unknown", p0, true, 0, false, t0) != notFound {
		t.Fatal("enter does not follow the bindings")
	}
	o.leave("kept", false, t0.Add(50*time.Second))
	bindSession(t, o, "new", p0, "a", t0.Add(90*time.Second))
	if _, ok := o.by["old"]; ok {
		t.Error("a binding idle for 90s (ttl 1m) was kept")
	}
	if _, ok := o.by["kept"]; !ok {
		t.Error("a binding used 40s ago was dropped")
	}
	if _, ok := o.by["streaming"]; !ok {
		t.Error("a binding with a request in flight was dropped")
	}
	if got := []int{sessionsOf(o, "a"), sessionsOf(o, "b")}; got[0] != 2 || got[1] != 1 {
		t.Errorf("sessions counted per client after the idle one went: got %v, want [2 1]", got)
	}
	o.forget("kept")
	if got := sessionsOf(o, "b"); got != 0 || o.clients["b"] != nil {
		t.Errorf("a client with no sessions left: got %d sessions (entry %v), want it forgotten", got, o.clients["b"])
	}
}

// The token a request was let in with leaves the headers; an issuer's
// token stays in the request's context, where an upstream's token
// exchange reads it (TestCallerIdentityReachesTheUpstream); a static
// gateway token, meant for this gateway only, and an unchecked token (no
// tokens configured) are not kept.
func TestCredentialAudienceCallerTokenKeptInContextOnly(t *testing.T) {
	for _, tt := range []struct {
		name   string
		opts   Options
		header string
		want   string
	}{
		{name: "static gateway token", opts: Options{BearerTokens: []string{"caller-secret"}}, header: "Bearer caller-secret", want: ""},
		{name: "no tokens configured", opts: Options{}, header: "Bearer caller-secret", want: ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var gotToken, gotHeader string
			next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				gotToken, gotHeader = CallerTokenOf(r.Context()), r.Header.Get("Authorization")
			})
			req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", strings.NewReader(toolsListBody))
			req.Host = "127.0.0.1"
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", tt.header)
			rec := httptest.NewRecorder()
			Guard(next, tt.opts).ServeHTTP(rec, req)
			if rec.Code != http.StatusOK {
				t.Fatalf("got %d %s, want 200", rec.Code, rec.Body)
			}
			if gotHeader != "" {
				t.Errorf("Authorization reached the handler: %q", gotHeader)
			}
			if gotToken != tt.want {
				t.Errorf("CallerTokenOf: got %q, want %q", gotToken, tt.want)
			}
		})
	}
}
