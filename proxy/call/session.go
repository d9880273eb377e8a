package call

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"

	"github.com/mcp-router/mcp-router/proxy/frontdoor"
)

// A session id is a bearer of its session (whoever holds it may resume
// it), so it never leaves the process in the clear: logs, traces and
// audit records name a session by SessionTag, a short hash that tells
// sessions apart and correlates the three without revealing the id.

// SessionTag is "s-" and the first 12 hex digits of id's SHA-256, or ""
// for no session.
func SessionTag(id string) string {
	if id == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(id))
	return "s-" + hex.EncodeToString(sum[:6])
}

// Who is the principal of c as audit records and quotas name it: its
// Principal, or frontdoor.LocalPrincipal for a caller with none.
func (c *Call) Who() string { return cmp.Or(c.Principal, frontdoor.LocalPrincipal) }
