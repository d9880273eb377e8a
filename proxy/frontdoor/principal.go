package frontdoor

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

type principalKey struct{}

// LocalPrincipal is the principal of calls that carry no bearer token:
// over stdio, and over HTTP when no tokens are configured.
const LocalPrincipal = "local"

// WithPrincipal marks ctx as a request of the named principal. Guard
// marks each request it lets through with a bearer token.
func WithPrincipal(ctx context.Context, name string) context.Context {
	return context.WithValue(ctx, principalKey{}, name)
}

// PrincipalOf is the principal Guard found for ctx's request: the
// fingerprint of its bearer token, or "" when it carried none.
func PrincipalOf(ctx context.Context) string {
	p, _ := ctx.Value(principalKey{}).(string)
	return p
}

type callerTokenKey struct{}

// withCallerToken keeps the bearer token a request was let in with, for
// an upstream's token exchange (the header itself is removed).
func withCallerToken(ctx context.Context, token string) context.Context {
	return context.WithValue(ctx, callerTokenKey{}, token)
}

// CallerTokenOf is the bearer token Guard let ctx's request in with, or
// "": for a token exchange only.
func CallerTokenOf(ctx context.Context) string {
	t, _ := ctx.Value(callerTokenKey{}).(string)
	return t
}

// TokenFingerprint is the name a bearer token's caller goes by: "token-"
// and the first 12 hex digits of its SHA-256.
func TokenFingerprint(token string) string {
	sum := sha256.Sum256([]byte(strings.TrimSpace(token)))
	return fingerprintOf(sum)
}

func fingerprintOf(sum [sha256.Size]byte) string {
	return "token-" + hex.EncodeToString(sum[:6])
}
