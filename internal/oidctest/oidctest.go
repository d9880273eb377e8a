// Package oidctest runs a real OpenID Connect provider (zitadel's op
// package, with its in-memory example storage) on a loopback httptest
// server, for tests of the gateway as a resource server: clients get JWT
// access tokens from it by the client-credentials grant, and tests mint
// tokens of their own (expired, for another audience, signed with a key
// it never published, unsigned, or HMAC-signed with its public key)
// under its signing key.
//
// It is imported by tests only.
package oidctest

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/zitadel/oidc/v3/example/server/storage"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
	"golang.org/x/oauth2/clientcredentials"
)

// Client is a confidential client of the issuer that gets tokens by the
// client-credentials grant: its tokens' subject is its ID, and they carry
// Claims (such as {"groups": ["admins"]}) and the scopes asked for.
type Client struct {
	ID, Secret string
	Claims     map[string]any
}

// Issuer is a running provider.
type Issuer struct {
	// URL is the issuer URL (http://127.0.0.1:port), its tokens' iss.
	URL string
	// Audience is the aud of the tokens it issues.
	Audience string

	key     *rsa.PrivateKey
	keyID   string
	clients map[string]Client

	mu         sync.Mutex
	keyFetches int
}

// Start runs an issuer whose tokens name audience, with clients, until
// the test ends.
func Start(t testing.TB, audience string, clients ...Client) *Issuer {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	iss := &Issuer{Audience: audience, key: key, keyID: "test-key-1", clients: map[string]Client{}}
	for _, c := range clients {
		iss.clients[c.ID] = c
	}
	var provider http.Handler
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/keys" {
			iss.mu.Lock()
			iss.keyFetches++
			iss.mu.Unlock()
		}
		provider.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	iss.URL = srv.URL
	st := &store{Storage: storage.NewStorage(storage.NewUserStore(srv.URL)), iss: iss}
	cfg := &op.Config{CryptoKey: sha256.Sum256([]byte(srv.URL)), CryptoKeyId: "crypto-1", AuthMethodPost: true}
	p, err := op.NewProvider(cfg, st, op.StaticIssuer(srv.URL), op.WithAllowInsecure(),
		op.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	provider = p
	return iss
}

// KeyFetches is how many times the key set was fetched.
func (i *Issuer) KeyFetches() int {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.keyFetches
}

// Token gets an access token for a client by the client-credentials
// grant, at the provider's token endpoint.
func (i *Issuer) Token(t testing.TB, clientID, secret string, scopes ...string) string {
	t.Helper()
	cc := clientcredentials.Config{ClientID: clientID, ClientSecret: secret, TokenURL: i.URL + "/oauth/token", Scopes: scopes}
	tok, err := cc.Token(t.Context())
	if err != nil {
		t.Fatalf("client credentials for %s: %v", clientID, err)
	}
	return tok.AccessToken
}

// Claims are the claims of a token the issuer would issue to subject:
// iss, sub, aud, iat, exp (an hour on).
func (i *Issuer) Claims(subject string) map[string]any {
	now := time.Now()
	return map[string]any{"iss": i.URL, "sub": subject, "aud": i.Audience,
		"iat": now.Unix(), "exp": now.Add(time.Hour).Unix()}
}

// Sign signs claims under the issuer's published key (RS256).
func (i *Issuer) Sign(t testing.TB, claims map[string]any) string {
	t.Helper()
	return sign(t, jose.SigningKey{Algorithm: jose.RS256, Key: i.key}, i.keyID, claims)
}

// SignUnknownKey signs claims with a key the issuer never published,
// under a key id it does not have.
func (i *Issuer) SignUnknownKey(t testing.TB, claims map[string]any) string {
	t.Helper()
	other, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return sign(t, jose.SigningKey{Algorithm: jose.RS256, Key: other}, "unknown-key", claims)
}

// SignHMACWithPublicKey signs claims with HS256, using the issuer's
// public key (DER, as a verifier confusing algorithms would read it) as
// the secret, under the published key id.
func (i *Issuer) SignHMACWithPublicKey(t testing.TB, claims map[string]any) string {
	t.Helper()
	der, err := x509.MarshalPKIXPublicKey(&i.key.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	return sign(t, jose.SigningKey{Algorithm: jose.HS256, Key: der}, i.keyID, claims)
}

// Unsigned is claims as a JWT with alg "none" and no signature.
func (i *Issuer) Unsigned(t testing.TB, claims map[string]any) string {
	t.Helper()
	enc := base64.RawURLEncoding
	header, _ := json.Marshal(map[string]string{"alg": "none", "typ": "JWT", "kid": i.keyID})
	body, err := json.Marshal(claims)
	if err != nil {
		t.Fatal(err)
	}
	return enc.EncodeToString(header) + "." + enc.EncodeToString(body) + "."
}

func sign(t testing.TB, key jose.SigningKey, keyID string, claims map[string]any) string {
	t.Helper()
	signer, err := jose.NewSigner(key, (&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", keyID))
	if err != nil {
		t.Fatal(err)
	}
	body, err := json.Marshal(claims)
	if err != nil {
		t.Fatal(err)
	}
	jws, err := signer.Sign(body)
	if err != nil {
		t.Fatal(err)
	}
	out, err := jws.CompactSerialize()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// store is the example storage with the issuer's clients, claims and key.
type store struct {
	*storage.Storage
	iss *Issuer
}

func (s *store) ClientCredentials(_ context.Context, clientID, secret string) (op.Client, error) {
	c, ok := s.iss.clients[clientID]
	if !ok || c.Secret != secret {
		return nil, oidc.ErrInvalidClient().WithDescription("wrong client or secret")
	}
	return &client{Client: storage.WebClient(c.ID, c.Secret)}, nil
}

func (s *store) ClientCredentialsTokenRequest(_ context.Context, clientID string, scopes []string) (op.TokenRequest, error) {
	return &oidc.JWTTokenRequest{Subject: clientID, Audience: []string{s.iss.Audience}, Scopes: scopes,
		IssuedAt: oidc.FromTime(time.Now())}, nil
}

// GetPrivateClaimsFromScopes gives a client's tokens its claims and the
// scopes granted, as RFC 9068's space-separated scope claim.
func (s *store) GetPrivateClaimsFromScopes(_ context.Context, subject, _ string, scopes []string) (map[string]any, error) {
	claims := map[string]any{}
	for k, v := range s.iss.clients[subject].Claims {
		claims[k] = v
	}
	if len(scopes) > 0 {
		claims["scope"] = strings.Join(scopes, " ")
	}
	return claims, nil
}

func (s *store) SigningKey(context.Context) (op.SigningKey, error) { return signingKey{s.iss}, nil }

func (s *store) SignatureAlgorithms(context.Context) ([]jose.SignatureAlgorithm, error) {
	return []jose.SignatureAlgorithm{jose.RS256}, nil
}

func (s *store) KeySet(context.Context) ([]op.Key, error) { return []op.Key{publicKey{s.iss}}, nil }

// client is a client-credentials client whose access tokens are JWTs.
type client struct{ *storage.Client }

func (c *client) AccessTokenType() op.AccessTokenType { return op.AccessTokenTypeJWT }

func (c *client) GrantTypes() []oidc.GrantType {
	return []oidc.GrantType{oidc.GrantTypeClientCredentials}
}

type signingKey struct{ iss *Issuer }

func (k signingKey) SignatureAlgorithm() jose.SignatureAlgorithm { return jose.RS256 }
func (k signingKey) Key() any                                    { return k.iss.key }
func (k signingKey) ID() string                                  { return k.iss.keyID }

type publicKey struct{ iss *Issuer }

func (k publicKey) ID() string                         { return k.iss.keyID }
func (k publicKey) Algorithm() jose.SignatureAlgorithm { return jose.RS256 }
func (k publicKey) Use() string                        { return "sig" }
func (k publicKey) Key() any                           { return &k.iss.key.PublicKey }
