package config

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/mcp-router/mcp-router/proxy/frontdoor"
)

const identityProfiles = `profiles:
  main: {}
  admin: {}
  staff: {}
`

// http.tokens and http.oidc are read, their variables expanded, beside
// the old bearer_tokens list; the profiles they name are served.
func TestIdentitySettings(t *testing.T) {
	cfg, err := load(t, `http:
  bearer_tokens: ["${OLD}"]
  tokens:
    - {token: "${ADMIN_TOKEN}", profile: admin}
    - {token: plain-token}
  oidc:
    issuer: https://login.example.com
    resource: ${RESOURCE}
    clock_skew: 30s
    required_scopes: [mcp:tools]
    principal_claim: email
    profiles:
      - {claim: groups, value: admins, profile: admin}
      - {claim: groups, value: staff, profile: staff}
    default_profile: staff
default_profile: main
`+identityProfiles, map[string]string{"OLD": "old-token", "ADMIN_TOKEN": "admin-token", "RESOURCE": "https://mcp.example.com/mcp"})
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.CheckHTTP(); err != nil {
		t.Fatal(err)
	}
	got := cfg.HTTP
	want := HTTP{
		BearerTokens: []string{"old-token"},
		Tokens:       []frontdoor.Token{{Token: "admin-token", Profile: "admin"}, {Token: "plain-token"}},
		OIDC: &frontdoor.OIDCOptions{Issuer: "https://login.example.com", Resource: "https://mcp.example.com/mcp",
			ClockSkew: 30 * time.Second, RequiredScopes: []string{"mcp:tools"}, PrincipalClaim: "email",
			Profiles: []frontdoor.ClaimProfile{{Claim: "groups", Value: "admins", Profile: "admin"},
				{Claim: "groups", Value: "staff", Profile: "staff"}},
			DefaultProfile: "staff"},
	}
	if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(HTTP{}, "AllowedOrigins", "DisconnectGrace", "Bounds")); diff != "" {
		t.Errorf("http settings (-want +got):\n%s", diff)
	}
	var opts frontdoor.Options
	cfg.HTTP.Auth(&opts)
	if opts.OIDC == nil || len(opts.Tokens) != 2 || len(opts.BearerTokens) != 1 {
		t.Errorf("auth options: got %+v, want the tokens and an issuer", opts)
	}
	if got, want := cfg.HTTP.ServedProfiles(), []string{"admin", "staff"}; !cmp.Equal(got, want) {
		t.Errorf("served profiles: got %v, want %v", got, want)
	}
}

// Each mistake is an error naming the file's line and the key.
func TestIdentityErrors(t *testing.T) {
	for name, tc := range map[string]struct{ http, want string }{
		"unknown token profile": {`  tokens: [{token: t, profile: nope}]`,
			`:2: http.tokens[0].profile: no profile "nope" (profiles: main, admin, staff)`},
		"token without token": {`  tokens: [{profile: admin}]`, `http.tokens[0].token: no token`},
		"unknown key":         {`  tokens: [{token: t, role: admin}]`, `role`},
		"no issuer":           {`  oidc: {resource: https://mcp.example.com/mcp}`, `http.oidc.issuer: required`},
		"no resource":         {`  oidc: {issuer: https://login.example.com}`, `http.oidc.resource: required`},
		"plain http issuer": {`  oidc: {issuer: http://login.example.com, resource: https://mcp.example.com/mcp}`,
			`http.oidc.issuer: "http://login.example.com": must be https (http only on a loopback host)`},
		"unknown claim profile": {"  oidc:\n    issuer: https://login.example.com\n    resource: https://mcp.example.com/mcp\n    profiles: [{claim: groups, value: x, profile: nope}]",
			`http.oidc.profiles[0].profile: no profile "nope"`},
		"half a rule": {"  oidc:\n    issuer: https://login.example.com\n    resource: https://mcp.example.com/mcp\n    profiles: [{claim: groups, profile: admin}]",
			`http.oidc.profiles[0]: each rule needs claim, value and profile`},
		"unknown default profile": {"  oidc:\n    issuer: https://login.example.com\n    resource: https://mcp.example.com/mcp\n    default_profile: nope",
			`http.oidc.default_profile: no profile "nope"`},
	} {
		_, err := load(t, "http:\n"+tc.http+"\n"+identityProfiles, nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "profiles.yaml:") {
			t.Errorf("%s: got %v, want an error in profiles.yaml containing %q", name, err, tc.want)
		}
	}
}

// A token whose variable expands to nothing stops serve --http only, as
// bearer_tokens do; stdio does not need the variable.
func TestIdentityEmptyTokenVariable(t *testing.T) {
	cfg, err := load(t, "http:\n  tokens: [{token: \"${MISSING}\", profile: admin}]\n"+identityProfiles, map[string]string{"MISSING": ""})
	if err != nil {
		t.Fatalf("Load: %v, want the error kept for serve --http", err)
	}
	if err := cfg.CheckHTTP(); err == nil || !strings.Contains(err.Error(), "http.tokens[0].token: the token is empty") {
		t.Errorf("CheckHTTP: got %v, want the empty token named", err)
	}
	if cfg.HTTP.Tokens != nil {
		t.Errorf("tokens after a failed expansion: got %v, want none", cfg.HTTP.Tokens)
	}
}
