package config

// Who may call the gateway over HTTP and which profile serves each caller: http.tokens and oidc.

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/mcp-router/mcp-router/internal/loopback"
	"github.com/mcp-router/mcp-router/proxy/frontdoor"
)

type rawToken struct {
	Token   string `yaml:"token"`
	Profile string `yaml:"profile"`
	Admin   bool   `yaml:"admin"`
}

type rawOIDC struct {
	Issuer         string            `yaml:"issuer"`
	Resource       string            `yaml:"resource"`
	Audience       string            `yaml:"audience"`
	JWKSURL        string            `yaml:"jwks_url"`
	ClockSkew      DurationValue     `yaml:"clock_skew"`
	RequiredScopes []string          `yaml:"required_scopes"`
	PrincipalClaim string            `yaml:"principal_claim"`
	Profiles       []rawClaimProfile `yaml:"profiles"`
	DefaultProfile string            `yaml:"default_profile"`
}

type rawClaimProfile struct {
	Claim   string `yaml:"claim"`
	Value   string `yaml:"value"`
	Profile string `yaml:"profile"`
}

// ServedProfiles are the profiles callers over HTTP may be served besides the gateway's own: those
// the tokens and the issuer's claims name, in the order first named, without duplicates.
func (h HTTP) ServedProfiles() []string {
	var out []string
	add := func(p string) {
		if p != "" && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	for _, t := range h.Tokens {
		add(t.Profile)
	}
	if h.OIDC != nil {
		for _, r := range h.OIDC.Profiles {
			add(r.Profile)
		}
		add(h.OIDC.DefaultProfile)
	}
	return out
}

// Auth sets who may call the gateway: the tokens and the issuer. Give every handler of one gateway
// the same opts: they share the issuer.
func (h HTTP) Auth(opts *frontdoor.Options) {
	opts.BearerTokens, opts.Tokens = h.BearerTokens, h.Tokens
	if h.OIDC != nil {
		opts.OIDC = frontdoor.NewIssuer(*h.OIDC)
	}
}

// identity checks http.tokens and http.oidc and expands their variables; an expansion error
// matters only to serve --http.
func (c *Config) identity(v *validator, root *yaml.Node, raw rawHTTP) {
	var expandErrs []error
	at := func(path ...string) (int, string) {
		path = append([]string{"http"}, path...)
		return settingLine(root, path...), dotted(path)
	}
	expand := func(val string, path ...string) string {
		out, err := Expand(val, c.getenv)
		if err != nil {
			line, key := at(path...)
			expandErrs = append(expandErrs, fmt.Errorf("%s:%d: %s: %w", c.File, line, key, err))
		}
		return out
	}
	profile := func(name string, path ...string) {
		if name != "" && !c.hasProfile(name) {
			line, key := at(path...)
			v.errorf(line, key, "no profile %q (profiles: %s)", name, strings.Join(c.names, ", "))
		}
	}
	for i, t := range raw.Tokens {
		if strings.TrimSpace(t.Token) == "" {
			v.errorf(settingLine(root, "http", "tokens", strconv.Itoa(i)), fmt.Sprintf("http.tokens[%d].token", i), "no token: give token: ${SOME_VARIABLE}")
			continue
		}
		profile(t.Profile, "tokens", strconv.Itoa(i), "profile")
		tok := expand(t.Token, "tokens", strconv.Itoa(i), "token")
		if strings.TrimSpace(tok) == "" {
			expandErrs = append(expandErrs, fmt.Errorf("%s:%d: http.tokens[%d].token: the token is empty (%q expanded to nothing); set the variable or remove the entry",
				c.File, settingLine(root, "http", "tokens", strconv.Itoa(i), "token"), i, t.Token))
		}
		c.HTTP.Tokens = append(c.HTTP.Tokens, frontdoor.Token{Token: tok, Profile: t.Profile, Admin: t.Admin})
	}
	if raw.OIDC != nil {
		c.HTTP.OIDC = c.oidc(v, root, *raw.OIDC, expand, profile)
	}
	if err := errors.Join(expandErrs...); err != nil {
		c.HTTP.Tokens, c.HTTP.OIDC = nil, nil
		c.httpErr = errors.Join(c.httpErr, err)
	}
}

func (c *Config) oidc(v *validator, root *yaml.Node, r rawOIDC, expand func(string, ...string) string, profile func(string, ...string)) *frontdoor.OIDCOptions {
	line := func(key ...string) int { return settingLine(root, append([]string{"http", "oidc"}, key...)...) }
	o := &frontdoor.OIDCOptions{
		Issuer: expand(r.Issuer, "oidc", "issuer"), Resource: expand(r.Resource, "oidc", "resource"),
		Audience: expand(r.Audience, "oidc", "audience"), JWKSURL: expand(r.JWKSURL, "oidc", "jwks_url"),
		ClockSkew:      time.Duration(r.ClockSkew),
		RequiredScopes: r.RequiredScopes, PrincipalClaim: r.PrincipalClaim, DefaultProfile: r.DefaultProfile,
	}
	if o.Issuer == "" {
		v.errorf(line(), "http.oidc.issuer", "required: the issuer URL of the authorization server (its tokens' iss claim)")
	}
	if o.Resource == "" {
		v.errorf(line(), "http.oidc.resource", "required: the URL clients reach the MCP endpoint at, such as https://mcp.example.com/mcp")
	}
	for _, kv := range [][2]string{{"issuer", o.Issuer}, {"resource", o.Resource}, {"jwks_url", o.JWKSURL}} {
		if err := checkAuthURL(kv[1]); kv[1] != "" && err != nil {
			v.errorf(line(kv[0]), "http.oidc."+kv[0], "%q: %v", kv[1], err)
		}
	}
	for i, rule := range r.Profiles {
		if rule.Claim == "" || rule.Value == "" || rule.Profile == "" {
			v.errorf(line("profiles", strconv.Itoa(i)), fmt.Sprintf("http.oidc.profiles[%d]", i),
				"each rule needs claim, value and profile, like {claim: groups, value: admins, profile: admin}")
			continue
		}
		profile(rule.Profile, "oidc", "profiles", strconv.Itoa(i), "profile")
		o.Profiles = append(o.Profiles, frontdoor.ClaimProfile{Claim: rule.Claim, Value: rule.Value, Profile: rule.Profile})
	}
	profile(r.DefaultProfile, "oidc", "default_profile")
	return o
}

// checkAuthURL accepts an https URL, or an http one on a loopback host (an issuer on the machine).
func checkAuthURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return errors.New("not an absolute URL")
	}
	switch {
	case u.Scheme == "https":
		return nil
	case u.Scheme == "http" && loopback.Host(u.Hostname()):
		return nil
	}
	return errors.New("must be https (http only on a loopback host)")
}
