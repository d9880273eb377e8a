package call

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-router/mcp-router/audit"
	"github.com/mcp-router/mcp-router/proxy/integrity"
)

// Auditor takes a record of each call (audit.Log queues it).
type Auditor interface {
	Record(audit.Record)
}

// Outcomes of a call in its audit record besides the error kinds.
const (
	outcomeOK        = "ok"
	outcomeToolError = "tool_error" // the tool answered isError
)

// MaxToolBytes bounds the tool name an audit record or a span keeps.
const MaxToolBytes = 128

// Audit is the stage that records every call that reaches it, refused
// ones too: observe hears the outcome and duration, a takes the record.
func Audit(a Auditor, observe func(c *Call, took time.Duration, res *mcp.CallToolResult, err error)) Stage {
	return func(ctx context.Context, c *Call, next Handler) (res *mcp.CallToolResult, err error) {
		start := time.Now()
		defer func() {
			if observe != nil {
				observe(c, time.Since(start), res, err)
			}
			if a != nil {
				a.Record(AuditRecord(c, start, res, err))
			}
		}()
		return next(ctx, c)
	}
}

// AuditRecord is c's audit record: the sizes of arguments and result, never their values.
func AuditRecord(c *Call, start time.Time, res *mcp.CallToolResult, err error) audit.Record {
	r := audit.Record{Time: start.UTC(), Principal: c.Who(), Session: SessionTag(c.Session), Tool: ClipName(c.Tool),
		Upstream: c.Upstream, Outcome: outcomeOK, Duration: time.Since(start), RequestBytes: jsonSize(c.Args),
		Plan: c.Plan, Step: c.Step, Approval: c.Approval, Approver: c.Approver}
	var ce *Error
	switch {
	case errors.As(err, &ce):
		r.Outcome = string(ce.Kind)
	case err != nil:
		r.Outcome = string(KindUpstreamError)
	case res != nil && res.IsError:
		r.Outcome = outcomeToolError
	}
	if res != nil {
		r.ResponseBytes = jsonSize(res)
	}
	return r
}

// ClipName cuts a tool name to MaxToolBytes (a client's name may be
// long), anything shaped like a secret redacted (a client chooses it, and
// audit records and spans leave the process).
func ClipName(name string) string {
	name = integrity.RedactSecrets(name)
	if len(name) <= MaxToolBytes {
		return name
	}
	return strings.ToValidUTF8(name[:MaxToolBytes], "") + "…"
}

// jsonSize is how many bytes v takes as JSON (0 for nothing), counted without keeping the encoding.
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

type byteCount int

func (c *byteCount) Write(p []byte) (int, error) {
	*c += byteCount(len(p))
	return len(p), nil
}
