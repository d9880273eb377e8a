package metatools

import (
	"crypto/rand"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mcp-router/mcp-router/routing"
)

// randomKey is a handle key, as a gateway's random session key gives.
func randomKey(t *testing.T) []byte {
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		t.Fatal(err)
	}
	return key
}

// A handle is refused when forged, tampered with, too long, expired or
// minted for another credential; it carries bounded state.
func TestHandleChecks(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	h := newHandles(randomKey(t))
	h.now = func() time.Time { return now }
	long := strings.Repeat("q", 10_000)
	st := routing.SessionState{Domains: []string{"math"}, Queries: []string{"a", "b", "c", "d", long}, Given: manyStrings(100)}
	good := h.mint("client-a", st, true)
	p, err := h.read("client-a", good)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	if len(p.State.Queries) != maxHandleQueries || len(p.State.Queries[3]) > maxHandleQuery || len(p.State.Given) != maxHandleGiven || !p.Outage {
		b, _ := json.Marshal(p)
		t.Errorf("carried %s: want %d queries of at most %d bytes, %d given, the outage", b, maxHandleQueries, maxHandleQuery, maxHandleGiven)
	}
	if len(good) > maxHandleBytes {
		t.Errorf("handle of %d bytes, bound %d", len(good), maxHandleBytes)
	}
	enc, sig, _ := strings.Cut(good, ".")
	for name, tc := range map[string]struct {
		client, handle string
		want           error
	}{
		"other credential": {"client-b", good, errHandleClient},
		"tampered":         {"client-a", enc + "x." + sig, errHandleForged},
		"no signature":     {"client-a", enc, errHandleForged},
		"too long":         {"client-a", strings.Repeat("x", maxHandleBytes+1), errHandleTooLong},
		"another process":  {"client-a", newHandles(randomKey(t)).mint("client-a", st, false), errHandleForged},
	} {
		if _, err := h.read(tc.client, tc.handle); err != tc.want {
			t.Errorf("%s: got %v, want %v", name, err, tc.want)
		}
	}
	now = now.Add(handleTTL + time.Second)
	if _, err := h.read("client-a", good); err != errHandleExpired {
		t.Errorf("a day later: got %v, want %v", err, errHandleExpired)
	}
}

func manyStrings(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = "tool_" + strings.Repeat("x", i%5)
	}
	return out
}

// A handle minted on one replica is read on another with the same session
// key, and ignored (with a note) under another key.
func TestHandleWorksOnAnotherReplica(t *testing.T) {
	key := randomKey(t)
	st := routing.SessionState{Queries: []string{"echo"}}
	h := newHandles(key).mint("client-a", st, false)
	if _, err := newHandles(key).read("client-a", h); err != nil {
		t.Errorf("same key: %v", err)
	}
	if _, err := newHandles(randomKey(t)).read("client-a", h); err != errHandleForged {
		t.Errorf("another key: %v, want %v", err, errHandleForged)
	}
}

// A handle has one spelling: every other spelling of the same bytes
// (padding, the standard alphabet, line breaks, a set trailing bit,
// another case) is refused.
func TestCanonicalHandle(t *testing.T) {
	hs := newHandles(randomKey(t))
	h := hs.mint("client-a", routing.SessionState{Queries: []string{"echo"}}, false)
	enc, sig, _ := strings.Cut(h, ".")
	for name, v := range respellings(enc) {
		if _, err := hs.read("client-a", v+"."+sig); err == nil {
			t.Errorf("handle body spelled with %s: accepted", name)
		}
	}
	for name, v := range respellings(sig) {
		if _, err := hs.read("client-a", enc+"."+v); err == nil {
			t.Errorf("handle signature spelled with %s: accepted", name)
		}
	}
	if _, err := hs.read("client-a", h); err != nil {
		t.Errorf("the handle as minted: %v", err)
	}
}

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
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	if len(s)%4 >= 2 { // a set trailing bit, which encoding/base64 decodes to the same bytes unless strict
		i := strings.IndexByte(alphabet, s[len(s)-1])
		out["trailing bit"] = s[:len(s)-1] + string(alphabet[i|1])
	}
	return out
}
