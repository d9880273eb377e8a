package proxy

import (
	"context"
	"os"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

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

// TestNoSecretInClientChosenToolNames (HR2-06): a client chooses the
// name it calls, and a model may be led to put a key there; the audit
// record and the call's span, which leave the process, name it redacted,
// as metrics labels do.
func TestNoSecretInClientChosenToolNames(t *testing.T) {
	db, file, log := auditedState(t)
	rec := tracetest.NewSpanRecorder()
	alice, _ := twoTokenGateway(t, Options{Audit: log, Tracing: sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))})
	secret := "ghp_" + strings.Repeat("aB3dE5fG7h", 4)[:36]
	alice.call(t, "call_tool", map[string]any{"name": secret, "arguments": map[string]any{}}) // refused: no such tool
	if err := log.Close(); err != nil {
		t.Fatal(err)
	}
	recs, err := db.Audit().Query(context.Background(), audit.Filter{})
	if err != nil || len(recs) != 1 {
		t.Fatalf("records: %v, %v; want one", recs, err)
	}
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	seen := []string{"the audit record " + recs[0].Tool, "the audit file " + string(raw)}
	for _, s := range rec.Ended() {
		seen = append(seen, "span "+s.Name())
		for _, kv := range s.Attributes() {
			seen = append(seen, "span attribute "+kv.Value.String())
		}
	}
	for _, s := range seen {
		if strings.Contains(s, secret[4:]) {
			t.Errorf("%s: keeps the secret", s)
		}
	}
}
