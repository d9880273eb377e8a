package call

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"

	"github.com/mcp-router/mcp-router/proxy/frontdoor"
)

// A session id lets whoever holds it resume the session, so logs, traces
// and audit records name a session by SessionTag, a short hash.

// SessionTag is "s-" and 12 hex digits of id's SHA-256, "" for none.
func SessionTag(id string) string {
	if id == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(id))
	return "s-" + hex.EncodeToString(sum[:6])
}

// Who is c's principal, frontdoor.LocalPrincipal for none.
func (c *Call) Who() string { return cmp.Or(c.Principal, frontdoor.LocalPrincipal) }
