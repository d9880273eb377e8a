package frontdoor

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"testing/synctest"
	"time"
)

// tryToken sends one request with token from addr through h, and returns
// the status and Retry-After.
func tryToken(h http.Handler, addr, token string) (int, string) {
	r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", nil)
	r.RemoteAddr = addr
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w.Code, w.Header().Get("Retry-After")
}

// An address that sends ten wrong tokens in a minute is refused with 429
// and Retry-After, the right token included, on every path that shares
// the limit; another address is not; a share of the minute later it may
// try again. A request without a token does not count.
func TestWrongTokensAreLimitedPerAddress(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ok := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
		opts := Options{BearerTokens: []string{"right"}, TokenFailures: NewTokenFailures(0)}
		mcp, metrics := Guard(ok, opts), Guard(ok, opts)
		const guesser, other = "192.0.2.7:4000", "192.0.2.8:4000"

		for range 20 {
			if got, _ := tryToken(mcp, guesser, ""); got != http.StatusUnauthorized {
				t.Fatalf("no token: got %d, want 401", got)
			}
		}
		for i := range DefaultTokenFailures {
			h := mcp
			if i%2 == 1 {
				h = metrics
			}
			if got, _ := tryToken(h, guesser, "wrong"+strconv.Itoa(i)); got != http.StatusUnauthorized {
				t.Fatalf("wrong token %d: got %d, want 401", i+1, got)
			}
		}
		for _, h := range []http.Handler{mcp, metrics} {
			got, retry := tryToken(h, "192.0.2.7:5000", "right")
			if got != http.StatusTooManyRequests || retry != "6" {
				t.Errorf("after %d wrong tokens, the right one from the same address: got %d Retry-After %q, want 429 Retry-After 6",
					DefaultTokenFailures, got, retry)
			}
		}
		if got, _ := tryToken(mcp, other, "right"); got != http.StatusNoContent {
			t.Errorf("another address with the right token: got %d, want 204", got)
		}
		time.Sleep(time.Minute / DefaultTokenFailures)
		if got, _ := tryToken(mcp, guesser, "right"); got != http.StatusNoContent {
			t.Errorf("a sixth of a minute later, the right token: got %d, want 204", got)
		}
		if got, _ := tryToken(mcp, guesser, "wrong"); got != http.StatusUnauthorized {
			t.Errorf("one more wrong token: got %d, want 401", got)
		}
		if got, _ := tryToken(mcp, guesser, "right"); got != http.StatusTooManyRequests {
			t.Errorf("right after it: got %d, want 429 again", got)
		}
	})
}

// One host's IPv6 /64 counts as one address; IPv4 addresses each count
// alone; a remote address that is no IP is not limited.
func TestTokenFailuresKeys(t *testing.T) {
	for _, tc := range []struct {
		name, a, b string
		same       bool
	}{
		{"one /64", "[2001:db8:1:2::1]:80", "[2001:db8:1:2:ffff::9]:81", true},
		{"two /64s", "[2001:db8:1:2::1]:80", "[2001:db8:1:3::1]:80", false},
		{"IPv4 mapped", "[::ffff:192.0.2.1]:80", "192.0.2.1:80", true},
		{"two IPv4", "192.0.2.1:80", "192.0.2.2:80", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ka, _ := clientKey(tc.a)
			kb, _ := clientKey(tc.b)
			if got := ka == kb; got != tc.same {
				t.Errorf("%s and %s count as one: %v, want %v", tc.a, tc.b, got, tc.same)
			}
		})
	}
	if _, ok := clientKey("pipe"); ok {
		t.Errorf("a remote address that is no IP has a key")
	}
}

// The addresses tracked are bounded: past the bound, those whose
// failures are forgotten go first, and the newest is always counted.
func TestTokenFailuresBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := NewTokenFailures(1)
		for i := range maxFailingAddrs {
			f.failed("10.0." + strconv.Itoa(i/256) + "." + strconv.Itoa(i%256) + ":1")
		}
		time.Sleep(time.Minute)
		f.failed("192.0.2.1:1")
		if n := len(f.addrs); n > maxFailingAddrs || f.wait("192.0.2.1:1") == 0 {
			t.Errorf("%d addresses tracked (bound %d), the newest waits %v", n, maxFailingAddrs, f.wait("192.0.2.1:1"))
		}
		if n := len(f.addrs); n != 1 {
			t.Errorf("%d addresses tracked after the others' failures were forgotten, want 1", n)
		}
	})
}

// A token refused because the issuer could not be reached is no fault of
// the caller's: it does not count against its address.
func TestTokensUncheckedDoNotCount(t *testing.T) {
	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close() // an issuer that cannot be reached
	ok := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	h := Guard(ok, Options{OIDC: NewIssuer(OIDCOptions{Issuer: gone.URL, Resource: testResource})})
	for i := range 2 * DefaultTokenFailures {
		if got, _ := tryToken(h, "192.0.2.7:4000", "a.b.c"); got != http.StatusUnauthorized {
			t.Fatalf("token %d while the issuer is down: got %d, want 401", i+1, got)
		}
	}
}
