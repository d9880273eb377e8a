package frontdoor

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcp-router/mcp-router/internal/oidctest"
)

const testResource = "https://mcp.example.test/mcp"

// oidcDoor is an issuer run by a real OIDC provider, and Guard in front
// of a handler that answers with the principal and profile it was given.
type oidcDoor struct {
	iss *oidctest.Issuer
	url string // the guarded endpoint
}

func newOIDCDoor(t *testing.T, opts OIDCOptions) *oidcDoor {
	t.Helper()
	return newOIDCDoorAt(t, opts, "")
}

// newOIDCDoorAt is newOIDCDoor whose Guard serves subresource of the
// resource (Options.Subresource).
func newOIDCDoorAt(t *testing.T, opts OIDCOptions, subresource string) *oidcDoor {
	t.Helper()
	iss := oidctest.Start(t, testResource,
		oidctest.Client{ID: "ada", Secret: "ada-secret", Claims: map[string]any{"groups": []any{"staff", "admins"}}},
		oidctest.Client{ID: "bob", Secret: "bob-secret", Claims: map[string]any{"groups": []any{"staff"}}},
		oidctest.Client{ID: "eve", Secret: "eve-secret"})
	opts.Issuer, opts.Resource = iss.URL, testResource
	inner := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]string{"principal": PrincipalOf(r.Context()), "profile": ProfileOf(r.Context())})
	})
	// The tests send many refused tokens from one address: more than the
	// default limit of failures (TestWrongTokensAreLimitedPerAddress).
	ts := httptest.NewServer(Guard(inner, Options{OIDC: NewIssuer(opts), TokenFailures: NewTokenFailures(1000), Subresource: subresource}))
	t.Cleanup(ts.Close)
	return &oidcDoor{iss: iss, url: ts.URL + "/mcp"}
}

type doorReply struct {
	status    int
	challenge string
	caller    map[string]string
}

func (d *oidcDoor) get(t *testing.T, token string) doorReply {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, d.url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	r := doorReply{status: resp.StatusCode, challenge: resp.Header.Get("WWW-Authenticate")}
	if resp.StatusCode == http.StatusOK {
		if err := json.Unmarshal(body, &r.caller); err != nil {
			t.Fatalf("reply %q: %v", body, err)
		}
	}
	return r
}

var testProfiles = []ClaimProfile{
	{Claim: "groups", Value: "admins", Profile: "admin"},
	{Claim: "groups", Value: "staff", Profile: "staff"},
}

// A token the provider issued by the client-credentials grant is taken:
// the caller is "oidc:" and its subject, served the profile of the first
// rule its claims match; a token no rule maps is refused with 403 when
// no default profile is set.
func TestOIDCTokenFromProviderMapsToProfile(t *testing.T) {
	d := newOIDCDoor(t, OIDCOptions{Profiles: testProfiles})
	for _, tc := range []struct {
		client, secret         string
		wantPrincipal, profile string
	}{
		{"ada", "ada-secret", "oidc:ada", "admin"},
		{"bob", "bob-secret", "oidc:bob", "staff"},
	} {
		r := d.get(t, d.iss.Token(t, tc.client, tc.secret))
		if r.status != http.StatusOK || r.caller["principal"] != tc.wantPrincipal || r.caller["profile"] != tc.profile {
			t.Errorf("%s: got %d %v, want 200 with principal %s and profile %s", tc.client, r.status, r.caller, tc.wantPrincipal, tc.profile)
		}
	}
	r := d.get(t, d.iss.Token(t, "eve", "eve-secret"))
	if r.status != http.StatusForbidden || !strings.Contains(r.challenge, `error="insufficient_scope"`) {
		t.Errorf("a token no rule maps: got %d %q, want 403 insufficient_scope", r.status, r.challenge)
	}
}

// With a default profile, a token no rule maps is served that profile.
func TestOIDCDefaultProfile(t *testing.T) {
	d := newOIDCDoor(t, OIDCOptions{Profiles: testProfiles, DefaultProfile: "guest"})
	if r := d.get(t, d.iss.Token(t, "eve", "eve-secret")); r.status != http.StatusOK || r.caller["profile"] != "guest" {
		t.Errorf("got %d %v, want 200 with profile guest", r.status, r.caller)
	}
}

// Every token that is not the issuer's own, for this resource, now, gets
// 401 with a challenge naming the metadata and error="invalid_token".
func TestOIDCRefusedTokens(t *testing.T) {
	d := newOIDCDoor(t, OIDCOptions{DefaultProfile: "guest"})
	claims := func(edit func(map[string]any)) map[string]any {
		c := d.iss.Claims("mallory")
		edit(c)
		return c
	}
	now := time.Now()
	good := d.iss.Sign(t, claims(func(map[string]any) {}))
	if r := d.get(t, good); r.status != http.StatusOK || r.caller["principal"] != "oidc:mallory" {
		t.Fatalf("a token signed with the issuer's key: got %d %v, want 200", r.status, r.caller)
	}
	if r := d.get(t, d.iss.Sign(t, claims(func(c map[string]any) { c["exp"] = now.Add(-30 * time.Second).Unix() }))); r.status != http.StatusOK {
		t.Errorf("a token expired 30s ago, within the 1m skew: got %d, want 200", r.status)
	}
	wantMetadata := `resource_metadata="https://mcp.example.test/.well-known/oauth-protected-resource/mcp"`
	for name, token := range map[string]string{
		"expired":           d.iss.Sign(t, claims(func(c map[string]any) { c["exp"] = now.Add(-2 * time.Minute).Unix() })),
		"no expiry":         d.iss.Sign(t, claims(func(c map[string]any) { delete(c, "exp") })),
		"not valid yet":     d.iss.Sign(t, claims(func(c map[string]any) { c["nbf"] = now.Add(10 * time.Minute).Unix() })),
		"wrong audience":    d.iss.Sign(t, claims(func(c map[string]any) { c["aud"] = "https://other.example.test/mcp" })),
		"wrong issuer":      d.iss.Sign(t, claims(func(c map[string]any) { c["iss"] = "https://evil.example.test" })),
		"no subject":        d.iss.Sign(t, claims(func(c map[string]any) { delete(c, "sub") })),
		"unknown key":       d.iss.SignUnknownKey(t, claims(func(map[string]any) {})),
		"alg none":          d.iss.Unsigned(t, claims(func(map[string]any) {})),
		"HS256, public key": d.iss.SignHMACWithPublicKey(t, claims(func(map[string]any) {})),
		"tampered":          good[:strings.LastIndex(good, ".")] + ".AAAA",
		"not a JWT":         "just-a-string",
	} {
		r := d.get(t, token)
		if r.status != http.StatusUnauthorized || !strings.Contains(r.challenge, wantMetadata) ||
			!strings.Contains(r.challenge, `error="invalid_token"`) {
			t.Errorf("%s: got %d %q, want 401 with %s and error=\"invalid_token\"", name, r.status, r.challenge, wantMetadata)
		}
	}
	r := d.get(t, "")
	if r.status != http.StatusUnauthorized || !strings.Contains(r.challenge, wantMetadata) || strings.Contains(r.challenge, "error=") {
		t.Errorf("no token: got %d %q, want 401 naming the metadata, without an error code", r.status, r.challenge)
	}
}

// Tokens naming key ids the issuer never published make the gateway
// fetch the key set again at most once per issuerRefetch.
func TestOIDCUnknownKeysFetchBounded(t *testing.T) {
	d := newOIDCDoor(t, OIDCOptions{DefaultProfile: "guest"})
	if r := d.get(t, d.iss.Sign(t, d.iss.Claims("ada"))); r.status != http.StatusOK {
		t.Fatalf("got %d, want 200", r.status)
	}
	before := d.iss.KeyFetches()
	for range 5 {
		if r := d.get(t, d.iss.SignUnknownKey(t, d.iss.Claims("ada"))); r.status != http.StatusUnauthorized {
			t.Fatalf("unknown key: got %d, want 401", r.status)
		}
	}
	if got := d.iss.KeyFetches() - before; got > 1 {
		t.Errorf("key set fetched %d more times for 5 unknown keys, want at most 1", got)
	}
}

// A token without a required scope gets 403 insufficient_scope naming
// the scope; with it, 200.
func TestOIDCRequiredScopes(t *testing.T) {
	d := newOIDCDoor(t, OIDCOptions{DefaultProfile: "guest", RequiredScopes: []string{"mcp:tools"}})
	r := d.get(t, d.iss.Token(t, "ada", "ada-secret"))
	if r.status != http.StatusForbidden || !strings.Contains(r.challenge, `error="insufficient_scope"`) ||
		!strings.Contains(r.challenge, `scope="mcp:tools"`) {
		t.Errorf("without the scope: got %d %q, want 403 insufficient_scope naming mcp:tools", r.status, r.challenge)
	}
	withScope := d.iss.Claims("ada")
	withScope["scope"] = "openid mcp:tools"
	if r := d.get(t, d.iss.Sign(t, withScope)); r.status != http.StatusOK {
		t.Errorf("with the scope: got %d, want 200", r.status)
	}
	withScope["scope"] = "openid"
	withScope["scp"] = []any{"mcp:tools"}
	if r := d.get(t, d.iss.Sign(t, withScope)); r.status != http.StatusOK {
		t.Errorf("with the scope in scp: got %d, want 200", r.status)
	}
}

// The protected-resource metadata names the resource, the issuer, the
// scopes and the bearer method, at both well-known paths, behind the
// Host check.
func TestOIDCResourceMetadata(t *testing.T) {
	opts := Options{OIDC: NewIssuer(OIDCOptions{Issuer: "https://issuer.example.test", Resource: testResource,
		RequiredScopes: []string{"mcp:tools"}})}
	paths := MetadataPaths(opts)
	if want := []string{metadataPath, metadataPath + "/mcp"}; strings.Join(paths, " ") != strings.Join(want, " ") {
		t.Fatalf("MetadataPaths: got %v, want %v", paths, want)
	}
	ts := httptest.NewServer(ResourceMetadata(opts))
	t.Cleanup(ts.Close)
	for _, p := range paths {
		resp, err := http.Get(ts.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		var doc metadataDocument
		err = json.NewDecoder(resp.Body).Decode(&doc)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK || doc.Resource != testResource ||
			strings.Join(doc.AuthorizationServers, " ") != "https://issuer.example.test" ||
			strings.Join(doc.ScopesSupported, " ") != "mcp:tools" || strings.Join(doc.BearerMethodsSupported, " ") != "header" {
			t.Errorf("%s: got %d %+v (%v)", p, resp.StatusCode, doc, err)
		}
	}
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, ts.URL+metadataPath, nil)
	req.Host = "evil.example.test"
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("foreign Host: got %d, want 403", resp.StatusCode)
	}
	if MetadataPaths(Options{}) != nil {
		t.Error("MetadataPaths without an issuer: want none")
	}
}

// A session belongs to the principal and the profile that opened it: the
// same subject with a token of another profile is refused as for an
// unknown session.
func TestSessionBoundToProfile(t *testing.T) {
	o := newOwners(time.Minute)
	now := time.Now()
	admin, staff := principal{name: "oidc:ada", profile: "admin"}, principal{name: "oidc:ada", profile: "staff"}
	bindSession(t, o, "s1", admin, "principal oidc:ada", now)
	if got := o.enter("s1", staff, true, 0, false, now); got != notFound {
		t.Errorf("same subject, another profile: got %v, want notFound", got)
	}
	if got := o.enter("s1", admin, true, 0, false, now); got != admitted {
		t.Errorf("the opener: got %v, want admitted", got)
	}
}

// A claim path with dots reaches into nested claims, as Keycloak puts
// roles; a claim named with dots is matched whole first.
func TestClaimAt(t *testing.T) {
	claims := map[string]any{
		"realm_access":             map[string]any{"roles": []any{"ops"}},
		"https://example.test/grp": "x",
	}
	if !claimHolds(claimAt(claims, "realm_access.roles"), "ops") {
		t.Error("realm_access.roles: want ops")
	}
	if !claimHolds(claimAt(claims, "https://example.test/grp"), "x") {
		t.Error("a claim named with dots: want x")
	}
	if claimHolds(claimAt(claims, "realm_access.missing"), "ops") || claimHolds(claimAt(claims, "realm_access.roles.x"), "ops") {
		t.Error("a path that leads nowhere matched")
	}
}

// What the issuer sends is read up to the bound: a key set past it fails,
// one at it is read whole.
func TestIssuerFetchBounded(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := maxIssuerBody
		if r.URL.Path == "/big" {
			n++
		}
		_, _ = w.Write([]byte(strings.Repeat("x", n)))
	}))
	t.Cleanup(ts.Close)
	client := NewIssuer(OIDCOptions{Issuer: ts.URL, Resource: testResource}).client
	for path, wantErr := range map[string]bool{"/big": true, "/exact": false} {
		resp, err := client.Get(ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if (err != nil) != wantErr || (!wantErr && len(b) != maxIssuerBody) {
			t.Errorf("%s: got %d bytes, error %v; want an error: %v", path, len(b), err, wantErr)
		}
	}
}

// BenchmarkOIDCVerify is the cost a JWT adds to a request: "first", its
// first use (the signature, RS256 with 2048 bits, and the claims; keys
// cached); "known", a token verified before.
func BenchmarkOIDCVerify(b *testing.B) {
	iss := oidctest.Start(b, testResource)
	v := NewIssuer(OIDCOptions{Issuer: iss.URL, Resource: testResource, DefaultProfile: "p"})
	token := iss.Sign(b, iss.Claims("ada"))
	if _, err := v.verify(b.Context(), token); err != nil {
		b.Fatal(err)
	}
	b.Run("first", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, _, err := v.check(b.Context(), token); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("known", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := v.verify(b.Context(), token); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkStaticToken is the same for a configured token, for scale.
func BenchmarkStaticToken(b *testing.B) {
	g := Guard(http.NotFoundHandler(), Options{BearerTokens: []string{"a-token", "b-token", "c-token"}}).(*guard)
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := g.tokenPrincipal("c-token"); !ok {
			b.Fatal("token not found")
		}
	}
}

// A verified token is remembered by its digest no longer than it is
// valid (exp with the skew) nor than knownFor; a full memory drops what
// no longer holds.
func TestOIDCKnownTokens(t *testing.T) {
	iss := oidctest.Start(t, testResource)
	v := NewIssuer(OIDCOptions{Issuer: iss.URL, Resource: testResource, DefaultProfile: "p"})
	claims := iss.Claims("ada")
	exp := time.Now().Add(10 * time.Second).Truncate(time.Second)
	claims["exp"] = exp.Unix()
	token := iss.Sign(t, claims)
	if _, err := v.verify(t.Context(), token); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(token))
	if got, want := v.known[sum].until, exp.Add(DefaultClockSkew); !got.Equal(want) {
		t.Errorf("remembered until %v, want exp with the skew, %v", got, want)
	}
	if _, ok := v.recall(sum, exp.Add(DefaultClockSkew)); ok {
		t.Error("recalled at its end, want it checked again")
	}
	if p, ok := v.recall(sum, time.Now()); !ok || p.name != "oidc:ada" {
		t.Errorf("recall now: got %v %v, want oidc:ada", p, ok)
	}
	long := iss.Claims("bob")
	token = iss.Sign(t, long)
	before := time.Now()
	if _, err := v.verify(t.Context(), token); err != nil {
		t.Fatal(err)
	}
	if until := v.known[sha256.Sum256([]byte(token))].until; until.After(time.Now().Add(knownFor)) || until.Before(before.Add(knownFor)) {
		t.Errorf("a token valid for an hour remembered until %v, want %s from now", until, knownFor)
	}
	now := time.Now()
	for i := range maxKnown {
		v.remember([sha256.Size]byte{byte(i), byte(i >> 8)}, principal{name: "x"}, now.Add(-time.Second), now.Add(-2*time.Second))
	}
	v.remember([sha256.Size]byte{0xff, 0xff, 0xff}, principal{name: "y"}, now.Add(time.Minute), now)
	if len(v.known) > maxKnown || len(v.known) < 1 {
		t.Errorf("after filling: %d remembered, want at most %d", len(v.known), maxKnown)
	}
	if _, ok := v.recall([sha256.Size]byte{0xff, 0xff, 0xff}, now); !ok {
		t.Error("the newest token was dropped")
	}
}

// A static token names its profile too, and ByProfile serves each caller
// the handler of its profile: the gateway's own for a token that names
// none.
func TestStaticTokenProfiles(t *testing.T) {
	serve := func(name string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.WriteString(w, name+" "+PrincipalOf(r.Context()))
		})
	}
	h := ByProfile(serve("own"), map[string]http.Handler{"ci": serve("ci")})
	ts := httptest.NewServer(Guard(h, Options{BearerTokens: []string{"plain"}, Tokens: []Token{{Token: "ci-token", Profile: "ci"}}}))
	t.Cleanup(ts.Close)
	for token, want := range map[string]string{
		"plain":    "own " + TokenFingerprint("plain"),
		"ci-token": "ci " + TokenFingerprint("ci-token"),
	} {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, ts.URL+"/mcp", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(body) != want {
			t.Errorf("%s: got %q, want %q", token, body, want)
		}
	}
}

// A path below the resource, as /mcp/all is below /mcp, has metadata of
// its own, naming it as the resource (a client checks that the metadata
// names the URL it connected to), and its 401 challenge points there. A
// token for it, or for the resource, is taken; with an audience set,
// only that audience is.
func TestOIDCSubresourceHasItsOwnMetadata(t *testing.T) {
	const all = testResource + "/all"
	d := newOIDCDoorAt(t, OIDCOptions{DefaultProfile: "guest"}, "/all")
	r := d.get(t, "")
	if want := `resource_metadata="https://mcp.example.test/.well-known/oauth-protected-resource/mcp/all"`; r.status != http.StatusUnauthorized ||
		!strings.Contains(r.challenge, want) {
		t.Errorf("no token at /all: got %d %q, want 401 with %s", r.status, r.challenge, want)
	}
	for aud, want := range map[string]int{all: http.StatusOK, testResource: http.StatusOK,
		"https://mcp.example.test/mcpx": http.StatusUnauthorized, "https://mcp.example.test/": http.StatusUnauthorized} {
		c := d.iss.Claims("mallory")
		c["aud"] = aud
		if r := d.get(t, d.iss.Sign(t, c)); r.status != want {
			t.Errorf("a token for %s: got %d, want %d", aud, r.status, want)
		}
	}
	strict := newOIDCDoorAt(t, OIDCOptions{DefaultProfile: "guest", Audience: testResource}, "/all")
	c := strict.iss.Claims("mallory")
	c["aud"] = all
	if r := strict.get(t, strict.iss.Sign(t, c)); r.status != http.StatusUnauthorized {
		t.Errorf("with audience %s, a token for %s: got %d, want 401", testResource, all, r.status)
	}

	opts := Options{OIDC: NewIssuer(OIDCOptions{Issuer: "https://issuer.example.test", Resource: testResource}), Subresource: "/all"}
	paths := MetadataPaths(opts)
	if want := metadataPath + "/mcp/all"; len(paths) != 1 || paths[0] != want {
		t.Fatalf("MetadataPaths of /all: got %v, want [%s]", paths, want)
	}
	rec := httptest.NewRecorder()
	ResourceMetadata(opts).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "http://127.0.0.1"+paths[0], nil))
	var doc metadataDocument
	if err := json.NewDecoder(rec.Body).Decode(&doc); err != nil || doc.Resource != all {
		t.Errorf("metadata of /all: %v %+v, want resource %s", err, doc, all)
	}
}

// A token whose signature does not verify is refused with 401, and the
// log says so, whether or not the key set may be fetched again to look
// for a newer key: the refusal of that fetch is not the reason.
func TestOIDCForgedSignatureLogged(t *testing.T) {
	iss := oidctest.Start(t, testResource)
	for _, tc := range []struct {
		name  string
		every time.Duration // issuerFetch's least time between two fetches
	}{
		{"fetched moments ago", issuerRefetch},
		{"fetched again", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			issuer := NewIssuer(OIDCOptions{Issuer: iss.URL, Resource: testResource, DefaultProfile: "guest"})
			issuer.client.Transport.(*issuerFetch).every = tc.every
			ok := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
			h := Guard(ok, Options{OIDC: issuer, Logger: slog.New(slog.NewTextHandler(&buf, nil))})
			good := iss.Sign(t, iss.Claims("mallory"))
			if got, _ := tryToken(h, "192.0.2.7:1", good); got != http.StatusNoContent {
				t.Fatalf("the issuer's token: got %d, want 204", got)
			}
			forged := good[:strings.LastIndex(good, ".")+1] + strings.Repeat("A", 342)
			if got, _ := tryToken(h, "192.0.2.7:1", forged); got != http.StatusUnauthorized {
				t.Fatalf("a forged signature: got %d, want 401", got)
			}
			out := buf.String()
			if !strings.Contains(out, `cause="the signature does not verify with the issuer's keys"`) || strings.Contains(out, "fetch") {
				t.Errorf("log: got %q, want the cause to say the signature does not verify, not a fetch", out)
			}
		})
	}
}
