package proxy

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
)

// A session id is a bearer of its session (whoever holds it may resume
// it), so it never leaves the process in the clear: logs, traces and
// audit records name a session by sessionTag, a short hash that tells
// sessions apart and correlates the three without revealing the id.

// sessionTag is "s-" and the first 12 hex digits of id's SHA-256, or ""
// for no session.
func sessionTag(id string) string {
	if id == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(id))
	return "s-" + hex.EncodeToString(sum[:6])
}

// sessionTagOf is the sessionTag of ctx's session.
func sessionTagOf(ctx context.Context) string { return sessionTag(sessionID(ctx)) }
