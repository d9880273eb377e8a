package upstreamauth_test

import (
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"

	"github.com/mcp-router/mcp-router/proxy/upstreamauth"
)

// BenchmarkAuthorizerHeader is the cost a stored login adds to each
// request to an upstream: the vault's cached record and mcp-go's handler.
func BenchmarkAuthorizerHeader(b *testing.B) {
	for _, bc := range []struct {
		name     string
		cacheFor time.Duration
	}{{"cached", 0}, {"uncached-memory-store", -1}} {
		b.Run(bc.name, func(b *testing.B) {
			vault, err := upstreamauth.NewVault(memState(b).Credentials(), testKey, bc.cacheFor)
			if err != nil {
				b.Fatal(err)
			}
			rec := &upstreamauth.Record{ClientID: "c", Token: transport.Token{AccessToken: "tok", TokenType: "Bearer", ExpiresAt: time.Now().Add(time.Hour)}}
			if err := vault.Save(b.Context(), "http://127.0.0.1:1/mcp", "", rec); err != nil {
				b.Fatal(err)
			}
			a := upstreamauth.NewAuthorizer(upstreamauth.AuthorizerOptions{Upstream: "notes", URL: "http://127.0.0.1:1/mcp", Vault: vault})
			b.ReportAllocs()
			for b.Loop() {
				if a.Header(b.Context())["Authorization"] != "Bearer tok" {
					b.Fatal("no header")
				}
			}
		})
	}
}
