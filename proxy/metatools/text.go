package metatools

import (
	"crypto/sha256"
	"encoding/hex"
	"unicode/utf8"

	"github.com/mcp-router/mcp-router/proxy/call"
)

// truncateUTF8 cuts s to at most n bytes on a rune boundary, marking a cut
// with "…".
func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// sessionTag names c's session in logs as the gateway's logs, traces and
// audit records do, without revealing its id (which resumes the session):
// "s-" and the first 12 hex digits of its SHA-256, or "" for none.
func sessionTag(c *call.Call) string {
	if c.Session == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(c.Session))
	return "s-" + hex.EncodeToString(sum[:6])
}
