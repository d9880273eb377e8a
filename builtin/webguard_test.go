package builtin

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/client"
)

const notAllowed = "; the web server was not started with --allow-private"

// newTrap serves a secret on loopback and counts the requests that reach it. It returns the
// server and its port.
func newTrap(t *testing.T) (*httptest.Server, string, *atomic.Int64) {
	t.Helper()
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, "secret")
	}))
	t.Cleanup(srv.Close)
	u, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	return srv, u.Port(), &hits
}

// wantNoHits fails the test if any request reached the trap.
func wantNoHits(t *testing.T, hits *atomic.Int64) {
	t.Helper()
	if n := hits.Load(); n != 0 {
		t.Errorf("the private server got %d requests, want 0", n)
	}
}

// startWeb builds the web server from opts and returns an initialized client for it.
func startWeb(t *testing.T, opts webOptions) *client.Client {
	t.Helper()
	c := connect(t, newWebServer(opts))
	initialize(t, c)
	return c
}

// onlyAddr is an allowAddr hook that lets through the address of srv and nothing else.
func onlyAddr(t *testing.T, srv *httptest.Server) func(netip.AddrPort) bool {
	t.Helper()
	want, err := netip.ParseAddrPort(srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	return func(ap netip.AddrPort) bool { return ap == want }
}

func TestWebRefusesPrivateDestinations(t *testing.T) {
	trap, port, hits := newTrap(t)
	c := start(t, "web", "--timeout", "5s")
	tests := []struct {
		name  string
		url   string
		wants []string // after "refusing to fetch URL: "
	}{
		{"loopback", trap.URL + "/", []string{"127.0.0.1 is a loopback address" + notAllowed}},
		{"loopback over https", "https://127.0.0.1:" + port + "/", []string{"127.0.0.1 is a loopback address"}},
		{"loopback beyond 127.0.0.1", "http://127.1.2.3/", []string{"127.1.2.3 is a loopback address"}},
		{"localhost", "http://localhost:" + port + "/", []string{"localhost resolves to", "a loopback address" + notAllowed}},
		{"IPv6 loopback", "http://[::1]:" + port + "/", []string{"::1 is a loopback address"}},
		{"10/8", "http://10.0.0.1/", []string{"10.0.0.1 is a private-network address"}},
		{"172.16/12", "http://172.31.255.254/", []string{"172.31.255.254 is a private-network address"}},
		{"192.168/16", "http://192.168.1.1:8080/admin", []string{"192.168.1.1 is a private-network address"}},
		{"IPv6 unique local", "http://[fd12:3456::1]/", []string{"fd12:3456::1 is a private-network address"}},
		{"cloud metadata", "http://169.254.169.254/latest/meta-data/", []string{"169.254.169.254 is a link-local address (cloud instance metadata)"}},
		{"IPv4 link-local", "http://169.254.1.1/", []string{"169.254.1.1 is a link-local address"}},
		{"IPv6 link-local with a zone", "http://[fe80::1%25eth0]/", []string{"fe80::1%eth0 is a link-local address"}},
		{"unspecified IPv4", "http://0.0.0.0:" + port + "/", []string{"0.0.0.0 is an unspecified address"}},
		{"unspecified IPv6", "http://[::]:" + port + "/", []string{":: is an unspecified address"}},
		{"this network", "http://0.1.2.3/", []string{`0.1.2.3 is a "this network" address`}},
		{"carrier-grade NAT", "http://100.64.0.1/", []string{"100.64.0.1 is a carrier-grade NAT (shared) address"}},
		{"IPv4 multicast", "http://224.0.0.1/", []string{"224.0.0.1 is a multicast address"}},
		{"IPv6 multicast", "http://[ff02::1]/", []string{"ff02::1 is a multicast address"}},
		{"broadcast", "http://255.255.255.255/", []string{"255.255.255.255 is the broadcast address"}},
		{"IPv4-mapped loopback", "http://[::ffff:127.0.0.1]:" + port + "/",
			[]string{"::ffff:127.0.0.1 is the IPv4-mapped form of 127.0.0.1, a loopback address"}},
		{"IPv4-mapped loopback in hex", "http://[::ffff:7f00:1]:" + port + "/",
			[]string{"::ffff:127.0.0.1 is the IPv4-mapped form of 127.0.0.1, a loopback address"}},
		{"IPv4-mapped metadata", "http://[::ffff:169.254.169.254]/",
			[]string{"the IPv4-mapped form of 169.254.169.254, a link-local address (cloud instance metadata)"}},
		{"NAT64 loopback", "http://[64:ff9b::7f00:1]/", []string{"64:ff9b::7f00:1 is the NAT64 form of 127.0.0.1, a loopback address"}},
		{"NAT64 private", "http://[64:ff9b::10.0.0.1]/", []string{"64:ff9b::a00:1 is the NAT64 form of 10.0.0.1, a private-network address"}},
		{"6to4 loopback", "http://[2002:7f00:1::]/", []string{"2002:7f00:1:: is the 6to4 form of 127.0.0.1, a loopback address"}},
	}
	for _, tt := range tests {
		for _, tool := range []string{"fetch_url", "extract_links"} {
			t.Run(tool+"/"+tt.name, func(t *testing.T) {
				res := call(t, c, tool, map[string]any{"url": tt.url})
				wantError(t, res, append([]string{tool + ": refusing to fetch " + tt.url + ": "}, tt.wants...)...)
			})
		}
	}
	wantNoHits(t, hits)
}

func TestWebRefusesIPv4InNonStandardForms(t *testing.T) {
	_, port, hits := newTrap(t)
	const form = " is an IPv4 address in hex, octal, integer or shortened form "
	tests := []struct {
		name string
		url  string
		want string // after "refusing to fetch URL: "
	}{
		{"hex integer", "http://0x7f000001/", "host 0x7f000001" + form + "(read as 127.0.0.1)"},
		{"decimal integer", "http://2130706433/", "host 2130706433" + form + "(read as 127.0.0.1)"},
		{"octal", "http://0177.0.0.1/", "host 0177.0.0.1" + form + "(read as 127.0.0.1)"},
		{"hex parts", "http://0x7f.0x0.0x0.0x1/", "host 0x7f.0x0.0x0.0x1" + form + "(read as 127.0.0.1)"},
		{"shortened", "http://127.1/", "host 127.1" + form + "(read as 127.0.0.1)"},
		{"trailing dot", "http://127.0.0.1./", "host 127.0.0.1." + form + "(read as 127.0.0.1)"},
		{"with a port", "http://0x7f000001:" + port + "/", "host 0x7f000001" + form + "(read as 127.0.0.1)"},
		{"hex metadata", "http://0xa9fea9fe/", "host 0xa9fea9fe" + form + "(read as 169.254.169.254)"},
		{"too many parts", "http://1.2.3.4.5/", "host 1.2.3.4.5 ends in a number but is not a valid IP address"},
		{"part out of range", "http://256.0.0.1/", "host 256.0.0.1 ends in a number but is not a valid IP address"},
	}
	// Refused with or without --allow-private: resolvers disagree on what these forms mean.
	for _, flags := range [][]string{nil, {"--allow-private"}} {
		c := start(t, "web", append(flags, "--timeout", "5s")...)
		for _, tt := range tests {
			for _, tool := range []string{"fetch_url", "extract_links"} {
				t.Run(fmt.Sprint(flags, "/", tool, "/", tt.name), func(t *testing.T) {
					res := call(t, c, tool, map[string]any{"url": tt.url})
					wantError(t, res, tool+": refusing to fetch "+tt.url+": "+tt.want)
				})
			}
		}
	}
	wantNoHits(t, hits)
}

func TestWebRefusesRedirectsToPrivateDestinations(t *testing.T) {
	trap, port, hits := newTrap(t)
	mux := http.NewServeMux()
	mux.HandleFunc("/to", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, r.URL.Query().Get("url"), http.StatusFound)
	})
	mux.HandleFunc("/page", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<title>Public</title><p>Hello</p>")
	})
	public := httptest.NewServer(mux)
	t.Cleanup(public.Close)
	to := func(target string) string { return public.URL + "/to?url=" + url.QueryEscape(target) }
	c := startWeb(t, webOptions{timeout: 5 * time.Second, allowAddr: onlyAddr(t, public)})

	t.Run("a redirect to a public host is followed", func(t *testing.T) {
		got := structured[fetchResult](t, call(t, c, "fetch_url", map[string]any{"url": to(public.URL + "/page")}))
		want := fetchResult{Title: "Public", URL: public.URL + "/page", Status: 200, ContentType: "text/html", Text: "Hello"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("fetch_url mismatch (-want +got):\n%s", diff)
		}
	})
	tests := []struct {
		name   string
		target string
		want   string
	}{
		{"loopback", trap.URL + "/secret",
			"refusing to fetch " + trap.URL + "/secret: 127.0.0.1 is a loopback address" + notAllowed},
		{"localhost", "http://localhost:" + port + "/secret", "refusing to fetch http://localhost:" + port + "/secret: localhost resolves to"},
		{"IPv4-mapped loopback", "http://[::ffff:127.0.0.1]:" + port + "/",
			"::ffff:127.0.0.1 is the IPv4-mapped form of 127.0.0.1, a loopback address" + notAllowed},
		{"cloud metadata", "http://169.254.169.254/latest/meta-data/",
			"refusing to fetch http://169.254.169.254/latest/meta-data/: 169.254.169.254 is a link-local address (cloud instance metadata)"},
		{"after a second hop", to(trap.URL + "/secret"), "127.0.0.1 is a loopback address" + notAllowed},
		{"hex IPv4", "http://0x7f000001:" + port + "/",
			"refused a redirect to http://0x7f000001:" + port + "/: host 0x7f000001 is an IPv4 address in hex"},
	}
	for _, tt := range tests {
		for _, tool := range []string{"fetch_url", "extract_links"} {
			t.Run(tool+"/"+tt.name, func(t *testing.T) {
				res := call(t, c, tool, map[string]any{"url": to(tt.target)})
				wantError(t, res, tool+":", tt.want)
			})
		}
	}
	wantNoHits(t, hits)
}

func TestAllowPrivateFetchesLoopback(t *testing.T) {
	trap, port, hits := newTrap(t)
	c := start(t, "web", "--allow-private")
	for _, u := range []string{trap.URL + "/secret", "http://localhost:" + port + "/secret"} {
		got := structured[fetchResult](t, call(t, c, "fetch_url", map[string]any{"url": u}))
		if got.Text != "secret" {
			t.Errorf("fetch_url(%s) text: got %q, want %q", u, got.Text, "secret")
		}
	}
	if n := hits.Load(); n != 2 {
		t.Errorf("the loopback server got %d requests, want 2", n)
	}
}

// proxyChildEnv marks the re-executed test binary in TestGuardIgnoresProxyEnvironment.
const proxyChildEnv = "MCP_ROUTER_TEST_WEB_PROXY_CHILD"

// TestGuardIgnoresProxyEnvironment runs in a child process, because net/http reads the proxy
// variables once per process. With a proxy configured, the default server still refuses a
// private destination by its own address (a proxy would fetch it out of the check's sight),
// while --allow-private goes through the proxy as before.
func TestGuardIgnoresProxyEnvironment(t *testing.T) {
	if os.Getenv(proxyChildEnv) != "" {
		c := start(t, "web", "--timeout", "5s")
		res := call(t, c, "fetch_url", map[string]any{"url": "http://10.0.0.1/"})
		wantError(t, res, "refusing to fetch http://10.0.0.1/: 10.0.0.1 is a private-network address")
		c = start(t, "web", "--allow-private", "--timeout", "5s")
		got := structured[fetchResult](t, call(t, c, "fetch_url", map[string]any{"url": "http://10.0.0.1/"}))
		if got.Text != "proxied http://10.0.0.1/" {
			t.Errorf("with --allow-private: got text %q, want it fetched through the proxy", got.Text)
		}
		return
	}
	var proxied atomic.Int64
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		proxied.Add(1)
		w.Header().Set("Connection", "close") // no idle connection left in the child for its leak check
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, "proxied ", r.URL)
	}))
	t.Cleanup(proxy.Close)
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestGuardIgnoresProxyEnvironment$", "-test.count=1")
	cmd.Env = append(os.Environ(), proxyChildEnv+"=1",
		"HTTP_PROXY="+proxy.URL, "http_proxy="+proxy.URL, "HTTPS_PROXY="+proxy.URL, "https_proxy="+proxy.URL,
		"NO_PROXY=", "no_proxy=", "REQUEST_METHOD=")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("child test: %v\n%s", err, out)
	}
	if n := proxied.Load(); n != 1 {
		t.Errorf("the proxy got %d requests, want 1 (from --allow-private only)", n)
	}
}

func TestAddrKind(t *testing.T) {
	tests := []struct {
		addr string
		want string // "" for public
	}{
		{"127.0.0.1", "a loopback address"},
		{"127.255.255.254", "a loopback address"},
		{"::1", "a loopback address"},
		{"10.1.2.3", "a private-network address"},
		{"172.16.0.1", "a private-network address"},
		{"192.168.0.1", "a private-network address"},
		{"fc00::1", "a private-network address"},
		{"169.254.169.254", "a link-local address (cloud instance metadata)"},
		{"169.254.0.1", "a link-local address"},
		{"fe80::1%eth0", "a link-local address"},
		{"0.0.0.0", "an unspecified address"},
		{"::", "an unspecified address"},
		{"0.0.0.1", `a "this network" address`},
		{"100.64.0.1", "a carrier-grade NAT (shared) address"},
		{"100.127.255.255", "a carrier-grade NAT (shared) address"},
		{"224.0.0.251", "a multicast address"},
		{"239.255.255.250", "a multicast address"},
		{"ff05::2", "a multicast address"},
		{"255.255.255.255", "the broadcast address"},
		{"240.0.0.1", "a reserved address"},
		{"192.0.2.1", "a documentation address"},
		{"198.18.0.1", "a network-benchmarking address"},
		{"2001:db8::1", "a documentation address"},
		{"fec0::1", "a site-local address"},
		{"100::1", "a discard-only address"},
		{"::127.0.0.1", "a deprecated IPv4-compatible address"},
		{"64:ff9b:1::1", "a local-use NAT64 address"},
		{"::ffff:127.0.0.1", "the IPv4-mapped form of 127.0.0.1, a loopback address"},
		{"::ffff:10.0.0.1", "the IPv4-mapped form of 10.0.0.1, a private-network address"},
		{"::ffff:0.0.0.0", "the IPv4-mapped form of 0.0.0.0, an unspecified address"},
		{"64:ff9b::169.254.169.254", "the NAT64 form of 169.254.169.254, a link-local address (cloud instance metadata)"},
		{"64:ff9b::192.168.1.1", "the NAT64 form of 192.168.1.1, a private-network address"},
		{"2002:a00:1::1", "the 6to4 form of 10.0.0.1, a private-network address"},
		{"8.8.8.8", ""},
		{"1.1.1.1", ""},
		{"93.184.215.14", ""},
		{"172.32.0.1", ""},
		{"100.128.0.1", ""},
		{"169.255.0.1", ""},
		{"11.0.0.1", ""},
		{"2606:4700:4700::1111", ""},
		{"::ffff:8.8.8.8", ""},
		{"64:ff9b::8.8.8.8", ""},
		{"2002:808:808::1", ""},
	}
	for _, tt := range tests {
		if got := addrKind(netip.MustParseAddr(tt.addr)); got != tt.want {
			t.Errorf("addrKind(%s): got %q, want %q", tt.addr, got, tt.want)
		}
	}
}

func TestCheckHost(t *testing.T) {
	tests := []struct {
		host string
		want string // "" for accepted, else a substring of the error
	}{
		{"example.org", ""},
		{"example.org.", ""},
		{"1e100.net", ""},
		{"123.example", ""},
		{"127.0.0.1", ""}, // refused later, at connect time, unless --allow-private
		{"8.8.8.8", ""},
		{"::1", ""},
		{"fe80::1%eth0", ""},
		{"0x7f000001", "(read as 127.0.0.1)"},
		{"0X7F000001", "(read as 127.0.0.1)"},
		{"2130706433", "(read as 127.0.0.1)"},
		{"0177.0.0.1", "(read as 127.0.0.1)"},
		{"0177.0.0.01", "(read as 127.0.0.1)"},
		{"127.1", "(read as 127.0.0.1)"},
		{"127.0.1", "(read as 127.0.0.1)"},
		{"127.0.0.1.", "(read as 127.0.0.1)"},
		{"010.0.0.1", "(read as 8.0.0.1)"},
		{"0x", "(read as 0.0.0.0)"},
		{"0", "(read as 0.0.0.0)"},
		{"4294967295", "(read as 255.255.255.255)"},
		{"4294967296", "not a valid IP address"},
		{"1.2.3.4.5", "not a valid IP address"},
		{"256.0.0.1", "not a valid IP address"},
		{"1.2.65536", "not a valid IP address"},
		{"08.0.0.1", "not a valid IP address"},
		{"example.123", "not a valid IP address"},
		{"example.0x1f", "not a valid IP address"},
	}
	for _, tt := range tests {
		err := checkHost(tt.host)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("checkHost(%q): got error %v, want none", tt.host, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("checkHost(%q): got error %v, want one containing %q", tt.host, err, tt.want)
		}
	}
}

func FuzzParseLegacyIPv4(f *testing.F) {
	for _, v := range []uint32{0, 1, 0x7f000001, 0xa9fea9fe, 0xffffffff} {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, v uint32) {
		want := netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
		b := want.As4()
		forms := []string{
			want.String(),
			strconv.FormatUint(uint64(v), 10),
			"0x" + strconv.FormatUint(uint64(v), 16),
			"0" + strconv.FormatUint(uint64(v), 8),
			fmt.Sprintf("0%o.0x%x.%d.0%o", b[0], b[1], b[2], b[3]),
			fmt.Sprintf("%d.%d.%d", b[0], b[1], uint32(b[2])<<8|uint32(b[3])),
			fmt.Sprintf("%d.%d", b[0], v&0xffffff),
		}
		for _, s := range forms {
			got, ok := parseLegacyIPv4(s)
			if !ok || got != want {
				t.Errorf("parseLegacyIPv4(%q): got %v, %v; want %v", s, got, ok, want)
			}
			if s != want.String() && checkHost(s) == nil {
				t.Errorf("checkHost(%q): got no error, want a refusal", s)
			}
		}
	})
}

// rebinder answers the first lookup of a name with first and every later one with then, as a DNS
// server rebinding its name to a private address would.
type rebinder struct {
	first, then []netip.Addr
	lookups     []string // "network host" of each lookup
}

func (r *rebinder) LookupNetIP(_ context.Context, network, host string) ([]netip.Addr, error) {
	r.lookups = append(r.lookups, network+" "+host)
	if len(r.lookups) == 1 {
		return r.first, nil
	}
	return r.then, nil
}

// recordDials replaces g's dialer with one that records the addresses dialed and fails for those
// in fail.
func recordDials(t *testing.T, g *guard, fail ...string) *[]string {
	t.Helper()
	var dialed []string
	g.dial = func(_ context.Context, _, address string) (net.Conn, error) {
		dialed = append(dialed, address)
		for _, f := range fail {
			if address == f {
				return nil, fmt.Errorf("connect %s: connection refused", address)
			}
		}
		c1, c2 := net.Pipe()
		t.Cleanup(func() { c1.Close(); c2.Close() })
		return c1, nil
	}
	return &dialed
}

var (
	publicAddr  = netip.MustParseAddr("93.184.215.14")
	publicAddr2 = netip.MustParseAddr("2606:2800:21f:cb07:6820:80da:af6b:8b2c")
	loopback    = netip.MustParseAddr("127.0.0.1")
)

func TestGuardDialsTheAddressItChecked(t *testing.T) {
	r := &rebinder{first: []netip.Addr{publicAddr}, then: []netip.Addr{loopback}}
	g := newGuard(r, nil)
	dialed := recordDials(t, g)

	if _, err := g.dialContext(t.Context(), "tcp", "rebind.test:443"); err != nil {
		t.Fatalf("first dial: %v", err)
	}
	if diff := cmp.Diff([]string{"93.184.215.14:443"}, *dialed); diff != "" {
		t.Errorf("dialed addresses mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"ip rebind.test"}, r.lookups); diff != "" {
		t.Errorf("lookups mismatch (-want +got):\n%s", diff)
	}

	// The name now resolves to loopback: the next connection checks the new answer.
	_, err := g.dialContext(t.Context(), "tcp", "rebind.test:443")
	var be *blockedError
	if !errors.As(err, &be) {
		t.Fatalf("second dial: got error %v, want a *blockedError", err)
	}
	if want := "rebind.test resolves to 127.0.0.1, a loopback address"; be.Error() != want {
		t.Errorf("second dial: got %q, want %q", be.Error(), want)
	}
	if len(*dialed) != 1 {
		t.Errorf("dialed %q, want only the first, public address", *dialed)
	}
}

func TestGuardRefusesWhenAnyAddressIsPrivate(t *testing.T) {
	r := &rebinder{first: []netip.Addr{publicAddr, netip.MustParseAddr("::ffff:10.0.0.1")}}
	g := newGuard(r, nil)
	dialed := recordDials(t, g)
	_, err := g.dialContext(t.Context(), "tcp", "mixed.test:80")
	var be *blockedError
	if !errors.As(err, &be) || be.Error() != "mixed.test resolves to 10.0.0.1, a private-network address" {
		t.Errorf("got error %v, want mixed.test refused for 10.0.0.1", err)
	}
	if len(*dialed) != 0 {
		t.Errorf("dialed %q, want nothing", *dialed)
	}
}

func TestGuardTriesEachCheckedAddressInTurn(t *testing.T) {
	r := &rebinder{first: []netip.Addr{publicAddr2, publicAddr}}
	g := newGuard(r, nil)
	first := netip.AddrPortFrom(publicAddr2, 80).String()
	dialed := recordDials(t, g, first)
	if _, err := g.dialContext(t.Context(), "tcp4", "dual.test:80"); err != nil {
		t.Fatalf("dial: %v", err)
	}
	if diff := cmp.Diff([]string{first, "93.184.215.14:80"}, *dialed); diff != "" {
		t.Errorf("dialed addresses mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"ip4 dual.test"}, r.lookups); diff != "" {
		t.Errorf("lookups mismatch (-want +got):\n%s", diff)
	}
}

func TestGuardNeverResolvesNumericHosts(t *testing.T) {
	r := &rebinder{first: []netip.Addr{publicAddr}}
	g := newGuard(r, nil)
	dialed := recordDials(t, g)
	for _, host := range []string{"0x7f000001", "2130706433", "0177.0.0.1"} {
		if _, err := g.dialContext(t.Context(), "tcp", host+":80"); err == nil || !strings.Contains(err.Error(), "read as 127.0.0.1") {
			t.Errorf("dial %s: got error %v, want a refusal reading it as 127.0.0.1", host, err)
		}
	}
	if len(r.lookups) != 0 || len(*dialed) != 0 {
		t.Errorf("got lookups %q and dials %q, want none", r.lookups, *dialed)
	}
}

func TestGuardControlChecksEverySocket(t *testing.T) {
	g := newGuard(net.DefaultResolver, nil)
	for _, tt := range []struct{ network, address, want string }{
		{"tcp4", "127.0.0.1:80", "127.0.0.1 is a loopback address"},
		{"tcp6", "[::ffff:10.0.0.1]:80", "::ffff:10.0.0.1 is the IPv4-mapped form of 10.0.0.1, a private-network address"},
		{"tcp6", "[fe80::1%eth0]:80", "fe80::1%eth0 is a link-local address"},
		{"tcp4", "93.184.215.14:443", ""},
	} {
		err := g.control(tt.network, tt.address, nil)
		if got := fmt.Sprint(err); (tt.want == "" && err != nil) || (tt.want != "" && got != tt.want) {
			t.Errorf("control(%s, %s): got %v, want %q", tt.network, tt.address, err, tt.want)
		}
	}
}

// TestGuardDialerRefusesLoopback dials a listening loopback socket with the guard's own dialer,
// bypassing its resolver check, as any future path to the dialer would: Control still refuses.
func TestGuardDialerRefusesLoopback(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	g := newGuard(net.DefaultResolver, nil)
	c, err := g.dial(t.Context(), "tcp", ln.Addr().String())
	if err == nil {
		c.Close()
		t.Fatalf("dial %s: got a connection, want a refusal", ln.Addr())
	}
	var be *blockedError
	if !errors.As(err, &be) {
		t.Errorf("dial %s: got error %v, want a *blockedError", ln.Addr(), err)
	}

	allowed := netip.MustParseAddrPort(ln.Addr().String())
	g = newGuard(net.DefaultResolver, func(ap netip.AddrPort) bool { return ap == allowed })
	c, err = g.dial(t.Context(), "tcp", ln.Addr().String())
	if err != nil {
		t.Fatalf("dial %s with the test hook allowing it: %v", ln.Addr(), err)
	}
	c.Close()
}
