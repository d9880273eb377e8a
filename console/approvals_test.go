package console

import (
	"context"
	"net/http"
	"net/url"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/mcp-router/mcp-router/proxy/approval"
	"github.com/mcp-router/mcp-router/proxy/frontdoor"
)

// SEC-17, SEC-21: the Approvals page shows a principal without admin only
// its own waiting calls, and it cannot answer them; an administrative
// principal sees all, answers only with the session's CSRF token, and
// reads a summary's markup as text.
func TestSurfaceAuthzConsoleApprovals(t *testing.T) {
	f := authzFixture(t)
	q := approval.NewQueue(0)
	q.Serve()
	f.console.opts.Approvals = q
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	for _, r := range []approval.Request{
		{Tool: "fs_wipe", Principal: frontdoor.TokenFingerprint(plainToken), Summary: "mine <script>alert(1)</script>"},
		{Tool: "fs_wipe", Principal: "token-000000000000", Summary: "theirs"},
	} {
		wg.Go(func() { q.Wait(ctx, r) })
	}
	for len(q.Pending()) < 2 {
		runtime.Gosched()
	}
	id := q.Pending()[0].ID

	csrf := f.loginWith(t, plainToken)
	_, body := f.do(t, http.MethodGet, "/ui/approvals", nil)
	if !strings.Contains(body, "mine") || strings.Contains(body, "theirs") {
		t.Errorf("a plain token's approvals page: want its own call only, got:\n%s", body)
	}
	if resp, _ := f.do(t, http.MethodPost, "/ui/approvals/answer", url.Values{"csrf": {csrf}, "id": {id}, "decision": {"approve"}}); resp.StatusCode != http.StatusForbidden {
		t.Errorf("a plain token's answer: got %d, want 403", resp.StatusCode)
	}

	f.fresh()
	csrf = f.loginWith(t, adminToken)
	_, body = f.do(t, http.MethodGet, "/ui/approvals", nil)
	if !strings.Contains(body, "mine") || !strings.Contains(body, "theirs") || strings.Contains(body, "<script>alert") {
		t.Errorf("an admin's approvals page: want both calls, markup escaped, got:\n%s", body)
	}
	if resp, _ := f.do(t, http.MethodPost, "/ui/approvals/answer", url.Values{"id": {id}, "decision": {"approve"}}); resp.StatusCode != http.StatusForbidden {
		t.Errorf("an answer without the CSRF token: got %d, want 403", resp.StatusCode)
	}
	if n := len(q.Pending()); n != 2 {
		t.Fatalf("after refused answers %d calls wait, want 2", n)
	}
	if resp, _ := f.do(t, http.MethodPost, "/ui/approvals/answer", url.Values{"csrf": {csrf}, "id": {id}, "decision": {"approve"}}); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("an admin's answer: got %d, want 303", resp.StatusCode)
	}
}
