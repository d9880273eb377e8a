package frontdoor

// JWT bearer tokens from an OAuth/OIDC issuer: go-oidc checks the
// signature, issuer, audience and expiry; this file adds the clock skew,
// not-before, the required scopes, the principal and the profile.

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"

	"github.com/mcp-router/mcp-router/internal/bodylimit"
	"github.com/mcp-router/mcp-router/internal/defaults"
	"github.com/mcp-router/mcp-router/internal/evict"
)

// Defaults of OIDCOptions.
const (
	DefaultClockSkew      = time.Minute
	DefaultPrincipalClaim = "sub"
)

// Bounds on what the gateway fetches from the issuer and reads from a token.
const (
	maxIssuerBody   = 1 << 20          // bytes of a discovery document or key set
	issuerTimeout   = 10 * time.Second // one fetch from the issuer
	issuerRefetch   = 10 * time.Second // least time between two fetches of one URL
	maxClaimValue   = 256              // bytes of the principal claim's value
	principalPrefix = "oidc:"          // principal names of token subjects
)

// signingAlgs are public-key algorithms only, so a public key can never
// serve as an HMAC secret, and never "none".
var signingAlgs = []string{
	oidc.RS256, oidc.RS384, oidc.RS512, oidc.PS256, oidc.PS384, oidc.PS512,
	oidc.ES256, oidc.ES384, oidc.ES512, oidc.EdDSA,
}

// OIDCOptions configures JWT bearer tokens from one issuer. Zero values
// take the defaults in brackets.
type OIDCOptions struct {
	// Issuer is the issuer URL, as its tokens' "iss" says it; required.
	Issuer string
	// Resource is the URL clients reach the MCP endpoint at; required.
	Resource string
	// Audience a token must name in "aud" [Resource, or a URL below it].
	Audience string
	// JWKSURL is the issuer's key set [from the issuer's discovery
	// document, /.well-known/openid-configuration].
	JWKSURL string
	// ClockSkew is the leeway on exp and nbf [DefaultClockSkew].
	ClockSkew time.Duration
	// RequiredScopes must all be in the token's "scope" (or "scp") claim;
	// a token without them gets 403 insufficient_scope.
	RequiredScopes []string
	// PrincipalClaim names the caller [DefaultPrincipalClaim], as "oidc:"
	// and its string value.
	PrincipalClaim string
	// Profiles map claims to profiles; the first rule that matches wins.
	Profiles []ClaimProfile
	// DefaultProfile serves a token that no rule maps; "" refuses it (403).
	DefaultProfile string
	// HTTPClient fetches the discovery document and the key set [a 10s
	// timeout]; replies are read up to 1 MiB.
	HTTPClient *http.Client
}

// ClaimProfile maps the tokens whose Claim (a dotted path such as
// realm_access.roles) is Value, or a list with it, to Profile.
type ClaimProfile struct {
	Claim, Value, Profile string
}

// MetadataURL is where the protected-resource metadata of resource is
// served (RFC 9728): the well-known path, followed by resource's path.
func MetadataURL(resource string) string {
	u, err := url.Parse(resource)
	if err != nil {
		return ""
	}
	return u.Scheme + "://" + u.Host + metadataPath + strings.TrimSuffix(u.Path, "/")
}

// Issuer checks JWTs from one issuer; a gateway's Guards share one. Its
// verifier is built on first use, and again after a failed discovery at
// most once per issuerRefetch.
type Issuer struct {
	opts          OIDCOptions
	client        *http.Client
	audienceBelow bool // Audience defaulted: a URL below Resource is taken too

	mu      sync.Mutex
	v       *oidc.IDTokenVerifier
	tried   time.Time // the last failed discovery
	lastErr error
	known   map[[sha256.Size]byte]knownToken // tokens verified, by digest
}

// knownToken is a token verified before, and until when its answer holds.
type knownToken struct {
	p     principal
	until time.Time
}

// Bounds of the verified tokens remembered.
const (
	maxKnown = 4096
	knownFor = 5 * time.Minute
)

// NewIssuer returns the Issuer of opts, with their defaults applied; no I/O.
func NewIssuer(opts OIDCOptions) *Issuer {
	anyBelow := opts.Audience == ""
	opts.Audience = cmp.Or(opts.Audience, opts.Resource)
	opts.PrincipalClaim = cmp.Or(opts.PrincipalClaim, DefaultPrincipalClaim)
	defaults.Set(&opts.ClockSkew, DefaultClockSkew)
	base := cmp.Or(opts.HTTPClient, &http.Client{Timeout: issuerTimeout})
	client := *base
	client.Transport = &issuerFetch{next: &bodylimit.Transport{Next: base.Transport, Max: maxIssuerBody},
		every: issuerRefetch, last: make(map[string]time.Time)}
	return &Issuer{opts: opts, client: &client, known: make(map[[sha256.Size]byte]knownToken), audienceBelow: anyBelow}
}

// recall is the principal of a token verified before, still valid.
func (t *Issuer) recall(sum [sha256.Size]byte, now time.Time) (principal, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	k, ok := t.known[sum]
	if !ok || !now.Before(k.until) {
		return noPrincipal, false
	}
	return k.p, true
}

// remember keeps a verified token's principal until until.
func (t *Issuer) remember(sum [sha256.Size]byte, p principal, until, now time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	evict.ToFit(t.known, maxKnown, func(v knownToken) bool { return !now.Before(v.until) })
	t.known[sum] = knownToken{p: p, until: until}
}

// verifier returns the go-oidc verifier, discovering the key set if need be.
func (t *Issuer) verifier(ctx context.Context) (*oidc.IDTokenVerifier, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.v != nil {
		return t.v, nil
	}
	if !t.tried.IsZero() && time.Since(t.tried) < issuerRefetch {
		return nil, t.lastErr
	}
	// The key set keeps this context (and the client) for later fetches.
	keyCtx := oidc.ClientContext(context.WithoutCancel(ctx), t.client)
	cfg := &oidc.Config{ClientID: t.opts.Audience, SupportedSigningAlgs: signingAlgs,
		Now:               func() time.Time { return time.Now().Add(-t.opts.ClockSkew) },
		SkipClientIDCheck: t.audienceBelow} // check reads aud
	if t.opts.JWKSURL != "" {
		t.v = oidc.NewVerifier(t.opts.Issuer, keySet{oidc.NewRemoteKeySet(keyCtx, t.opts.JWKSURL)}, cfg)
		return t.v, nil
	}
	fetchCtx, cancel := context.WithTimeout(oidc.ClientContext(ctx, t.client), issuerTimeout)
	defer cancel()
	p, err := oidc.NewProvider(fetchCtx, t.opts.Issuer)
	var doc struct {
		JWKSURL string `json:"jwks_uri"`
	}
	if err == nil {
		if err = p.Claims(&doc); err == nil && doc.JWKSURL == "" {
			err = errors.New("its discovery document names no jwks_uri")
		}
	}
	if err != nil {
		t.tried, t.lastErr = time.Now(), fmt.Errorf("discovering the issuer %s: %w", t.opts.Issuer, err)
		return nil, t.lastErr
	}
	t.v = oidc.NewVerifier(t.opts.Issuer, keySet{oidc.NewRemoteKeySet(keyCtx, doc.JWKSURL)}, cfg)
	return t.v, nil
}

// errBadSignature refuses a token none of the issuer's keys verifies.
var errBadSignature = errors.New("the signature does not verify with the issuer's keys")

// goOIDCBadSignature is go-oidc's error (it has no sentinel) when no key
// of a freshly fetched key set verifies a signature.
const goOIDCBadSignature = "failed to verify id token signature"

// keySet tells a signature that does not verify apart from other
// failures: go-oidc refetches the key set then, which issuerFetch may
// refuse, and would report a failed fetch rather than the forgery. go-oidc
// keeps only the error's text, so the verdict travels in the context.
type keySet struct{ next oidc.KeySet }

// sigVerdict hears whether the signature failed to verify.
type sigVerdict struct{ bad bool }

type sigVerdictKey struct{}

func (k keySet) VerifySignature(ctx context.Context, jwt string) ([]byte, error) {
	payload, err := k.next.VerifySignature(ctx, jwt)
	if err == nil || (!errors.Is(err, errFetchedRecently) && err.Error() != goOIDCBadSignature) {
		return payload, err
	}
	if v, ok := ctx.Value(sigVerdictKey{}).(*sigVerdict); ok {
		v.bad = true
	}
	return nil, errBadSignature
}

// tokenError is why a token was refused: Code is the RFC 6750 error
// (invalid_token, insufficient_scope) and Reason the detail for the log.
type tokenError struct {
	Status      int
	Code        string
	Description string // for the client: says what, never the claims
	Reason      string // for the log
	Unchecked   bool   // the issuer could not be asked: not the caller's fault
}

func (e *tokenError) Error() string { return e.Reason }

func invalidToken(description, reason string) *tokenError {
	return &tokenError{Status: http.StatusUnauthorized, Code: "invalid_token", Description: description, Reason: reason}
}

// verify checks raw and returns its caller, remembered for knownFor at most.
func (t *Issuer) verify(ctx context.Context, raw string) (principal, *tokenError) {
	sum, now := sha256.Sum256([]byte(raw)), time.Now()
	if p, ok := t.recall(sum, now); ok {
		return p, nil
	}
	p, exp, terr := t.check(ctx, raw)
	if terr == nil {
		until := now.Add(knownFor)
		if end := exp.Add(t.opts.ClockSkew); end.Before(until) {
			until = end
		}
		t.remember(sum, p, until, now)
	}
	return p, terr
}

// check verifies raw and returns its caller and its expiry.
func (t *Issuer) check(ctx context.Context, raw string) (principal, time.Time, *tokenError) {
	v, err := t.verifier(ctx)
	if err != nil {
		e := invalidToken("the gateway cannot check tokens now", err.Error())
		e.Unchecked = true
		return noPrincipal, time.Time{}, e
	}
	sig := &sigVerdict{}
	tok, err := v.Verify(context.WithValue(ctx, sigVerdictKey{}, sig), raw)
	if err != nil {
		var expired *oidc.TokenExpiredError
		if errors.As(err, &expired) {
			return noPrincipal, time.Time{}, invalidToken("the token has expired", err.Error())
		}
		if sig.bad {
			err = errBadSignature
		}
		return noPrincipal, time.Time{}, invalidToken("the token is not valid for this resource", err.Error())
	}
	if t.audienceBelow && !slices.ContainsFunc(tok.Audience, t.forUs) {
		return noPrincipal, time.Time{}, invalidToken("the token is not valid for this resource",
			fmt.Sprintf("aud %q names neither %s nor a URL below it", tok.Audience, t.opts.Resource))
	}
	var claims map[string]any
	if err := tok.Claims(&claims); err != nil {
		return noPrincipal, time.Time{}, invalidToken("the token's claims are not a JSON object", err.Error())
	}
	if nbf, ok := claims["nbf"].(float64); ok && time.Now().Add(t.opts.ClockSkew).Before(time.Unix(int64(nbf), 0)) {
		return noPrincipal, time.Time{}, invalidToken("the token is not valid yet", "nbf is in the future")
	}
	if missing := missingScopes(claims, t.opts.RequiredScopes); len(missing) > 0 {
		return noPrincipal, time.Time{}, &tokenError{Status: http.StatusForbidden, Code: "insufficient_scope",
			Description: "the token lacks a required scope",
			Reason:      "the token lacks the scopes " + strings.Join(missing, " ")}
	}
	name, ok := claims[t.opts.PrincipalClaim].(string)
	if !ok || name == "" || len(name) > maxClaimValue {
		return noPrincipal, time.Time{}, invalidToken("the token does not name its subject",
			fmt.Sprintf("claim %q is not a string of 1 to %d bytes", t.opts.PrincipalClaim, maxClaimValue))
	}
	profile, ok := t.profileOf(claims)
	if !ok {
		return noPrincipal, time.Time{}, &tokenError{Status: http.StatusForbidden, Code: "insufficient_scope",
			Description: "no profile of this gateway is mapped to the token's claims",
			Reason:      "no rule of http.oidc.profiles matches the token, and http.oidc.default_profile is not set"}
	}
	return principal{name: principalPrefix + name, profile: profile}, tok.Expiry, nil
}

// resourceAt is the URL of subresource (such as "/all") below resource.
func resourceAt(resource, subresource string) string {
	if subresource == "" {
		return resource
	}
	return strings.TrimSuffix(resource, "/") + "/" + strings.TrimPrefix(subresource, "/")
}

// forUs reports whether aud is the resource or a URL below it.
func (t *Issuer) forUs(aud string) bool {
	return aud == t.opts.Resource || strings.HasPrefix(aud, strings.TrimSuffix(t.opts.Resource, "/")+"/")
}

// profileOf is the profile of the first rule claims match, else the default.
func (t *Issuer) profileOf(claims map[string]any) (string, bool) {
	for _, rule := range t.opts.Profiles {
		if claimHolds(claimAt(claims, rule.Claim), rule.Value) {
			return rule.Profile, true
		}
	}
	return t.opts.DefaultProfile, t.opts.DefaultProfile != ""
}

// claimAt follows a dotted path into nested claims; nil when it leads nowhere.
func claimAt(claims map[string]any, path string) any {
	if v, ok := claims[path]; ok { // a claim named with dots, such as a URL
		return v
	}
	var cur any = claims
	for part := range strings.SplitSeq(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[part]
	}
	return cur
}

// claimHolds reports whether v is want, or a list holding want.
func claimHolds(v any, want string) bool {
	switch v := v.(type) {
	case string:
		return v == want
	case []any:
		return slices.ContainsFunc(v, func(e any) bool { s, ok := e.(string); return ok && s == want })
	}
	return false
}

// missingScopes are the required scopes the token's "scope" or "scp" (a
// space-separated string or a list) does not grant.
func missingScopes(claims map[string]any, required []string) []string {
	var granted []string
	for _, key := range []string{"scope", "scp"} {
		switch v := claims[key].(type) {
		case string:
			granted = append(granted, strings.Fields(v)...)
		case []any:
			for _, e := range v {
				if s, ok := e.(string); ok {
					granted = append(granted, s)
				}
			}
		}
	}
	return slices.DeleteFunc(slices.Clone(required), func(s string) bool { return slices.Contains(granted, s) })
}

// issuerFetch fetches one URL at most once per every, so that tokens
// naming unknown key ids cannot make the gateway hammer the issuer.
type issuerFetch struct {
	next  http.RoundTripper
	every time.Duration

	mu   sync.Mutex
	last map[string]time.Time // URL -> when it was last fetched
}

// errFetchedRecently refuses a fetch of a URL fetched moments ago.
var errFetchedRecently = errors.New("fetched moments ago; not again yet")

func (f *issuerFetch) RoundTrip(req *http.Request) (*http.Response, error) {
	key := req.URL.String()
	f.mu.Lock()
	now := time.Now()
	if t, ok := f.last[key]; ok && now.Sub(t) < f.every {
		f.mu.Unlock()
		return nil, fmt.Errorf("%s: %w", req.URL.Redacted(), errFetchedRecently)
	}
	f.last[key] = now
	f.mu.Unlock()
	return f.next.RoundTrip(req)
}

// metadataDocument is the RFC 9728 protected-resource metadata.
type metadataDocument struct {
	Resource               string   `json:"resource"`
	AuthorizationServers   []string `json:"authorization_servers"`
	ScopesSupported        []string `json:"scopes_supported,omitempty"`
	BearerMethodsSupported []string `json:"bearer_methods_supported"`
	ResourceName           string   `json:"resource_name,omitempty"`
}

// metadata is the document of the resource or its subresource.
func (t *Issuer) metadata(subresource string) []byte {
	b, _ := json.Marshal(metadataDocument{
		Resource: resourceAt(t.opts.Resource, subresource), AuthorizationServers: []string{t.opts.Issuer},
		ScopesSupported: t.opts.RequiredScopes, BearerMethodsSupported: []string{"header"},
		ResourceName: "mcp-router",
	})
	return b
}
