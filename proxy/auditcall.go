package proxy

import (
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-router/mcp-router/audit"
	"github.com/mcp-router/mcp-router/proxy/call"
)

// Auditor takes a record of each call; it must not block (audit.Log).
type Auditor interface {
	Record(audit.Record)
}

// Outcomes of a call in its audit record besides the error kinds.
const (
	outcomeOK        = "ok"
	outcomeToolError = "tool_error" // the tool answered isError
)

// maxAuditToolBytes bounds the tool name an audit record or a span keeps.
const maxAuditToolBytes = 128

// audit records c, which started at start, when the hub has an
// Auditor. Only the sizes of the arguments and the result are kept,
// never their values.
func (h *Hub) audit(c *call.Call, start time.Time, res *mcp.CallToolResult, err error) {
	if h.opts.Audit == nil {
		return
	}
	r := audit.Record{Time: start.UTC(), Principal: who(c), Session: sessionTag(c.Session), Tool: clipName(c.Tool),
		Upstream: c.Upstream, Outcome: outcomeOK, Duration: time.Since(start), RequestBytes: jsonSize(c.Args),
		Plan: c.Plan, Step: c.Step}
	var ue *UpstreamError
	switch {
	case errors.As(err, &ue):
		r.Outcome = string(ue.Kind)
	case err != nil:
		r.Outcome = string(KindUpstreamError)
	case res != nil && res.IsError:
		r.Outcome = outcomeToolError
	}
	if res != nil {
		r.ResponseBytes = jsonSize(res)
	}
	h.opts.Audit.Record(r)
}

// clipName cuts a tool name to maxAuditToolBytes: a name the catalog
// does not have comes from the client and may be long.
func clipName(name string) string {
	if len(name) <= maxAuditToolBytes {
		return name
	}
	return strings.ToValidUTF8(name[:maxAuditToolBytes], "") + "…"
}

// jsonSize is how many bytes v takes as JSON (0 for nothing). A tool
// result is counted from its fields (resultSize) when it can be;
// otherwise the encoding is counted as it is written rather than kept.
func jsonSize(v any) int {
	switch v := v.(type) {
	case nil:
		return 0
	case json.RawMessage:
		return len(v)
	case *mcp.CallToolResult:
		if v == nil {
			break
		}
		if n := resultSize(v); n != uncounted {
			return n
		}
	}
	var n byteCount
	if err := json.NewEncoder(&n).Encode(v); err != nil { // escaped as json.Marshal does
		return 0
	}
	return int(n) - 1 // Encode ends the value with a newline
}

// byteCount is a writer that counts what it is given.
type byteCount int

func (c *byteCount) Write(p []byte) (int, error) {
	*c += byteCount(len(p))
	return len(p), nil
}

// AuditDropped counts an audit record dropped (audit.Options.OnDrop).
func (m *Metrics) AuditDropped() {
	if m != nil {
		m.auditDropped.Inc()
	}
}
