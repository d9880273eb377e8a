package console

import (
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/mcp-router/mcp-router/proxy/frontdoor"
	"github.com/mcp-router/mcp-router/routing/lessons"
)

// The console's callers: an administrative token, a plain bearer token
// of the gateway's own profile, and a token restricted to another.
const (
	adminToken      = "admin-token-0123456789"
	plainToken      = "plain-token-0123456789"
	restrictedToken = "other-token-0123456789"
)

func authzFixture(t *testing.T) *fixture {
	t.Helper()
	return newFixtureDoor(t, frontdoor.Options{BearerTokens: []string{plainToken},
		Tokens: []frontdoor.Token{{Token: adminToken, Admin: true}, {Token: restrictedToken, Profile: "other"}},
		// The test's requests come from loopback, a trusted proxy, each
		// naming its client in X-Forwarded-For.
		TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}})
}

// fresh forgets the fixture's login (a new browser).
func (f *fixture) fresh() {
	jar, _ := cookiejar.New(nil)
	f.client.Jar = jar
}

// A token restricted to another profile cannot log in; a plain token sees
// the pages but may not restart, approve or forget (403 saying what it
// takes), and sees only its own and shared lessons; an administrative
// token does all of it.
func TestSurfaceAuthzConsoleRoles(t *testing.T) {
	f := authzFixture(t)
	resp, body := f.do(t, http.MethodPost, "/ui/login", url.Values{"token": {restrictedToken}})
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(body, "restricted to the profile") {
		t.Errorf("login with a token of another profile: got %d, want 403 naming the profile", resp.StatusCode)
	}
	ctx := t.Context()
	for _, l := range []lessons.Lesson{
		{Query: "shared lesson", Tool: "calc_add", Polarity: lessons.Use},
		{Query: "lesson of plain", Tool: "calc_add", Polarity: lessons.Use, Principal: frontdoor.TokenFingerprint(plainToken)},
		{Query: "lesson of someone else", Tool: "calc_add", Polarity: lessons.Use, Principal: "token-000000000000"},
	} {
		if _, err := f.mem.Lessons().Put(ctx, l); err != nil {
			t.Fatal(err)
		}
	}

	f.fresh()
	csrf := f.loginWith(t, plainToken)
	if resp, body := f.do(t, http.MethodGet, "/ui/upstreams", nil); resp.StatusCode != http.StatusOK || strings.Contains(body, "<button>Restart") {
		t.Errorf("a plain token's GET /ui/upstreams: got %d (a Restart button: %v), want 200 without one", resp.StatusCode, strings.Contains(body, "<button>Restart"))
	}
	_, body = f.do(t, http.MethodGet, "/ui/lessons", nil)
	if !strings.Contains(body, "shared lesson") || !strings.Contains(body, "lesson of plain") || strings.Contains(body, "someone else") {
		t.Errorf("a plain token's lessons page: want the shared lesson and its own only, got:\n%s", body)
	}
	actions := []struct {
		path string
		form url.Values
	}{
		{"/ui/upstreams/restart", url.Values{"upstream": {"calc"}}},
		{"/ui/pins/approve", url.Values{"upstream": {"calc"}, "tool": {"add"}}},
		{"/ui/lessons/forget", url.Values{"id": {"1"}}},
	}
	for _, a := range actions {
		a.form.Set("csrf", csrf)
		resp, body := f.do(t, http.MethodPost, a.path, a.form)
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(body, "administrative token") {
			t.Errorf("a plain token's POST %s: got %d, want 403 saying it needs an administrative token", a.path, resp.StatusCode)
		}
	}
	if len(f.gw.restarted) != 0 {
		t.Errorf("restarts by a plain token: %v, want none", f.gw.restarted)
	}
	if all, _ := f.mem.Lessons().All(ctx); len(all) != 3 {
		t.Errorf("lessons after a plain token's forget: %d, want 3", len(all))
	}

	f.fresh()
	csrf = f.loginWith(t, adminToken)
	_, body = f.do(t, http.MethodGet, "/ui/lessons", nil)
	if !strings.Contains(body, "someone else") || !strings.Contains(body, "<button>Forget") {
		t.Error("an administrative token's lessons page does not show every principal's lessons with Forget")
	}
	resp, _ = f.do(t, http.MethodPost, "/ui/upstreams/restart", url.Values{"csrf": {csrf}, "upstream": {"calc"}})
	if resp.StatusCode != http.StatusSeeOther || len(f.gw.restarted) != 1 {
		t.Errorf("an administrative token's restart: got %d, restarts %v, want 303 and one", resp.StatusCode, f.gw.restarted)
	}
	resp, _ = f.do(t, http.MethodPost, "/ui/lessons/forget", url.Values{"csrf": {csrf}, "id": {"1"}})
	if resp.StatusCode != http.StatusSeeOther {
		t.Errorf("an administrative token's forget: got %d, want 303", resp.StatusCode)
	}
}

// The login limit counts per source: a flood of wrong tokens from one
// address locks that address out, never the right token from another.
func TestSurfaceAuthzLoginLimitPerSource(t *testing.T) {
	f := authzFixture(t)
	now := time.Now()
	f.console.logins.now = func() time.Time { return now }
	for range maxFailedLogins + 5 {
		f.do(t, http.MethodPost, "/ui/login", url.Values{"token": {"guess"}}, "X-Forwarded-For", "203.0.113.66")
	}
	if resp, _ := f.do(t, http.MethodPost, "/ui/login", url.Values{"token": {adminToken}}, "X-Forwarded-For", "203.0.113.66"); resp.StatusCode != http.StatusTooManyRequests {
		t.Errorf("the flooding address, after %d wrong tokens: got %d, want 429", maxFailedLogins, resp.StatusCode)
	}
	if resp, _ := f.do(t, http.MethodPost, "/ui/login", url.Values{"token": {adminToken}}, "X-Forwarded-For", "198.51.100.7"); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("the right token from another address during the flood: got %d, want 303", resp.StatusCode)
	}
	// An IPv6 host's addresses are one source (its /64).
	for i := range maxFailedLogins {
		f.do(t, http.MethodPost, "/ui/login", url.Values{"token": {"guess"}}, "X-Forwarded-For", fmt.Sprintf("2001:db8:1:2::%x", i+1))
	}
	if resp, _ := f.do(t, http.MethodPost, "/ui/login", url.Values{"token": {adminToken}}, "X-Forwarded-For", "2001:db8:1:2::ff"); resp.StatusCode != http.StatusTooManyRequests {
		t.Errorf("another address of a flooding /64: got %d, want 429", resp.StatusCode)
	}
}
