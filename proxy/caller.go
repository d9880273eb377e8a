package proxy

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/mark3labs/mcp-go/server"
)

// LocalPrincipal is the principal of calls that carry no bearer token:
// over stdio, and over HTTP when no tokens are configured.
const LocalPrincipal = "local"

type principalKey struct{}

// withPrincipal marks ctx as a call of the named principal.
func withPrincipal(ctx context.Context, name string) context.Context {
	return context.WithValue(ctx, principalKey{}, name)
}

// sessionID is the client session of ctx; over stdio there is one.
func sessionID(ctx context.Context) string {
	if cs := server.ClientSessionFromContext(ctx); cs != nil {
		return cs.SessionID()
	}
	return ""
}

// principalName is who ctx's caller is: the fingerprint of its bearer
// token, or LocalPrincipal.
func principalName(ctx context.Context) string {
	if p, _ := ctx.Value(principalKey{}).(string); p != "" {
		return p
	}
	return LocalPrincipal
}

// TokenFingerprint is the name a bearer token's caller goes by in audit
// records and quotas: "token-" and the first 12 hex digits of the token's
// SHA-256, which says which token without revealing it.
func TokenFingerprint(token string) string {
	sum := sha256.Sum256([]byte(strings.TrimSpace(token)))
	return fingerprintOf(sum)
}

func fingerprintOf(sum [sha256.Size]byte) string {
	return "token-" + hex.EncodeToString(sum[:6])
}
