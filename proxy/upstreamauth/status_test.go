package upstreamauth_test

import (
	"testing"
	"time"

	"github.com/mcp-router/mcp-router/proxy/upstreamauth"
)

// Words says each state of a login, naming the command that logs in again
// where one is needed.
func TestStatusWords(t *testing.T) {
	now := time.Date(2026, 7, 1, 12, 0, 0, 0, time.Local)
	later, earlier := now.Add(time.Hour), now.Add(-time.Hour)
	at := func(t time.Time) string { return t.Format(time.DateTime) }
	for _, tc := range []struct {
		name string
		s    upstreamauth.Status
		want string
	}{
		{"unreadable", upstreamauth.Status{Upstream: "gh", Err: "bad key"}, "unreadable: bad key"},
		{"none", upstreamauth.Status{Upstream: "gh", Principal: "alice"}, "needs login (mcp-router auth login gh --for alice)"},
		{"no expiry", upstreamauth.Status{LoggedIn: true}, "logged in"},
		{"no expiry, refreshable", upstreamauth.Status{LoggedIn: true, Refreshable: true}, "logged in, refreshable"},
		{"valid", upstreamauth.Status{LoggedIn: true, ExpiresAt: later}, "logged in until " + at(later)},
		{"valid, refreshable", upstreamauth.Status{LoggedIn: true, ExpiresAt: later, Refreshable: true},
			"logged in until " + at(later) + ", refreshable"},
		{"expired, refreshable", upstreamauth.Status{LoggedIn: true, ExpiresAt: earlier, Refreshable: true},
			"expired at " + at(earlier) + ", refreshable (the next call refreshes it)"},
		{"expired", upstreamauth.Status{Upstream: "gh", LoggedIn: true, ExpiresAt: earlier},
			"expired at " + at(earlier) + ": needs login (mcp-router auth login gh)"},
	} {
		if got := tc.s.Words(now); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}
