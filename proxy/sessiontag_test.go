package proxy

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/mcp-router/mcp-router/audit"
	"github.com/mcp-router/mcp-router/proxy/call"
)

// TestNoSecretInAuditRecords: a session id lets whoever holds it resume
// the session, so the audit file and store name a call's session by its
// tag (a short hash), never by the id the client holds.
func TestNoSecretInAuditRecords(t *testing.T) {
	db, file, log := auditedState(t)
	alice, _ := twoTokenGateway(t, Options{Audit: log})
	wantServed(t, "direct", alice.call(t, "alpha_echo", map[string]any{"text": "hi"}))
	if err := log.Close(); err != nil {
		t.Fatal(err)
	}
	id := alice.session.ID()
	if id == "" {
		t.Fatal("the client has no session id")
	}
	recs, err := db.Audit().Query(context.Background(), audit.Filter{})
	if err != nil || len(recs) != 1 {
		t.Fatalf("records: %v, %v; want one", recs, err)
	}
	if got, want := recs[0].Session, call.SessionTag(id); got != want {
		t.Errorf("record's session: got %q, want the tag %q", got, want)
	}
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), id) {
		t.Errorf("the audit file holds the session id: %s", raw)
	}
}
