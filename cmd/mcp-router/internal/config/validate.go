package config

import (
	"cmp"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/mcp-router/mcp-router/proxy"
	"github.com/mcp-router/mcp-router/proxy/approval"
	"github.com/mcp-router/mcp-router/proxy/integrity"
	"github.com/mcp-router/mcp-router/routing"
	"github.com/mcp-router/mcp-router/routing/fuse"
)

// Routing is a profile's routing section as the file writes it: zero when unset, for the router, the
// session and the breaker to apply their defaults once; a 0 written is negative, which the router
// keeps as zero.
type Routing struct {
	routing.RouterOptions
	// Mode is "routed" (a small belt plus request_more_tools) or "all" (every catalog tool on the
	// belt).
	Mode           string
	MaxTools       int
	MaxDiscoveries int
	ResetAfter     time.Duration
	// Lessons turns the experience memory on (learning from detours and routing_feedback; serve
	// only).
	Lessons bool
	// SharedLessons makes what one principal teaches (routing_feedback, detours) steer every
	// principal's routing; off, each its own.
	SharedLessons bool
}

// The routing defaults (decision 5 in docs/design.md).
func defaultRouting() Routing {
	return Routing{RouterOptions: routing.RouterOptions{DiscoveryPrefixes: slices.Clone(routing.DefaultDiscoveryPrefixes)},
		Mode: "routed", Lessons: true}
}

var (
	// upstreamNamePattern keeps "<name>_" a valid tool-name prefix.
	upstreamNamePattern = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,48}$`)
	prefixPattern       = regexp.MustCompile(`^[A-Za-z0-9_.-]{0,48}$`)
)

var protocols = []string{"2025-11-25", "2025-06-18", "2025-03-26", "modern"}

// validator collects every structural problem of the file at once.
type validator struct {
	file     string
	builtins []string
	errs     []error
	warnings []string
}

func (v *validator) errorf(line int, path, format string, args ...any) {
	v.errs = append(v.errs, fmt.Errorf("%s:%d: %s: %s", v.file, line, path, fmt.Sprintf(format, args...)))
}

func (v *validator) warnf(line int, path, format string, args ...any) {
	v.warnings = append(v.warnings, fmt.Sprintf("%s:%d: %s: %s", v.file, line, path, fmt.Sprintf(format, args...)))
}

func (v *validator) err() error { return errors.Join(v.errs...) }

func (c *Config) validate(v *validator, raw *rawConfig) {
	if len(raw.Profiles) == 0 {
		v.errorf(1, "profiles", "no profiles: add at least one, e.g. profiles: {default: {upstreams: {calculator: {builtin: calculator}}}}")
	}
	c.routing = map[string]Routing{}
	c.approval = map[string]approval.Policy{}
	for _, p := range raw.Profiles {
		path := "profiles." + p.Key
		if len(p.Value.Upstreams) == 0 && len(c.broken[p.Key]) == 0 {
			v.warnf(p.Line, path, "no upstreams: only the gateway's own tools will be offered")
		}
		p.Value.Upstreams, c.broken[p.Key] = v.validUpstreams(path, p.Value.Upstreams, c.broken[p.Key])
		prof := p.Value
		c.profiles[p.Key] = p
		c.names = append(c.names, p.Key)
		c.routing[p.Key] = v.routing(path+".routing", p.Node, prof.Routing)
		c.approval[p.Key] = v.approvals(path+".approvals", p.Node, prof.Approvals)
		if _, err := integrity.ParsePolicy(prof.Integrity.Poisoning); err != nil {
			v.errorf(keyLine(valueNode(p.Node, "integrity"), "poisoning", p.Line), path+".integrity.poisoning", "%q is not warn or quarantine", prof.Integrity.Poisoning)
		}
		if _, err := integrity.ParseResultPolicy(prof.Integrity.Results); err != nil {
			v.errorf(keyLine(valueNode(p.Node, "integrity"), "results", p.Line), path+".integrity.results", "%q is not off, warn, redact or block", prof.Integrity.Results)
		}
	}
	c.serving(v, raw)
	c.audit(raw.Audit)
	c.tracing(v, raw.Tracing)
	if c.DefaultProfile != "" && !c.hasProfile(c.DefaultProfile) && len(c.names) > 0 {
		v.errorf(1, "default_profile", "no profile %q (profiles: %s)", c.DefaultProfile, strings.Join(c.names, ", "))
	}
}

func (v *validator) upstream(path string, e entry[rawUpstream]) {
	u, line := e.Value, func(key string) int { return keyLine(e.Node, key, e.Line) }
	if !upstreamNamePattern.MatchString(e.Key) {
		v.errorf(e.Line, path, "upstream names may use letters, digits, '_', '-' and '.' (at most 48)")
	}
	if !v.server(path, e, line) {
		return
	}
	if u.Prefix != nil && !prefixPattern.MatchString(*u.Prefix) {
		v.errorf(line("prefix"), path+".prefix", "%q: a prefix may use letters, digits, '_', '-' and '.' (at most 48)", *u.Prefix)
	}
	v.description(path+".description", u.Description, line("description"))
	if _, err := integrity.ParseResultPolicy(u.Results); err != nil {
		v.errorf(line("results"), path+".results", "%q is not off, warn, redact or block", u.Results)
	}
	if u.Protocol != "" && !slices.Contains(protocols, u.Protocol) {
		v.errorf(line("protocol"), path+".protocol", "%q is not one of %s", u.Protocol, strings.Join(protocols, ", "))
	}
	for _, name := range u.Tools.Allow {
		if slices.Contains(u.Tools.Deny, name) {
			v.warnf(line("tools"), path+".tools", "%q is both allowed and denied; deny wins", name)
		}
	}
	v.readOnlyTools(path+".read_only_tools", u, line("read_only_tools"))
	v.maxTimeout(path+".max_timeout", u, line("max_timeout"))
}

// server checks how an upstream runs: exactly one of command, url and builtin, and that one's keys;
// false when there is not exactly one.
func (v *validator) server(path string, e entry[rawUpstream], line func(string) int) bool {
	u, kinds := e.Value, 0
	for _, set := range []bool{u.Command != nil, u.URL != nil, u.Builtin != nil} {
		if set {
			kinds++
		}
	}
	switch {
	case kinds != 1:
		v.errorf(e.Line, path, "needs exactly one of command (a local server), url (a remote server) or builtin (%s)",
			strings.Join(v.builtins, ", "))
		return false
	case u.Command != nil:
		v.stdio(path, u, line)
	case u.URL != nil:
		v.remote(path, u, line)
	default:
		if !slices.Contains(v.builtins, *u.Builtin) {
			v.errorf(line("builtin"), path+".builtin", "unknown built-in server %q (built-ins: %s)", *u.Builtin, strings.Join(v.builtins, ", "))
		}
		v.only(path, u, line, "builtin", "args")
	}
	return true
}

// MaxDescription bounds an upstream's description, in characters: it is shown to the model with
// each of the upstream's routed tools.
const MaxDescription = 1000

// description checks an upstream's description: bounded, plain text (no control characters).
func (v *validator) description(path, d string, line int) {
	switch n := utf8.RuneCountInString(d); {
	case !utf8.ValidString(d):
		v.errorf(line, path, "not valid UTF-8")
	case n > MaxDescription:
		v.errorf(line, path, "%d characters: at most %d (say what the upstream is for in a sentence or two)", n, MaxDescription)
	case strings.ContainsFunc(d, func(r rune) bool { return unicode.IsControl(r) && r != '\n' }):
		v.errorf(line, path, "a control character: use plain text")
	}
}

// maxTimeout checks that the hard maximum of a call is not below its (idle) timeout.
func (v *validator) maxTimeout(path string, u rawUpstream, line int) {
	hard, idle := time.Duration(u.MaxTimeout), time.Duration(u.Timeout)
	if hard == 0 {
		return
	}
	what := "timeout"
	if idle == 0 {
		idle, what = proxy.DefaultCallTimeout, "the default timeout"
	}
	if hard < idle {
		v.errorf(line, path, "%s is shorter than %s (%s): it must be at least as long", hard, what, idle)
	}
}

// readOnlyTools checks the tools a profile vouches for as read-only: each is an upstream's own tool
// name, and one that is never exposed is a slip.
func (v *validator) readOnlyTools(path string, u rawUpstream, line int) {
	for _, name := range u.ReadOnlyTools {
		switch {
		case strings.TrimSpace(name) == "":
			v.errorf(line, path, "an empty tool name (list the upstream's own tool names, without the prefix)")
		case slices.Contains(u.Tools.Deny, name):
			v.warnf(line, path, "%q is denied in tools.deny, so it is never exposed", name)
		case len(u.Tools.Allow) > 0 && !slices.Contains(u.Tools.Allow, name):
			v.warnf(line, path, "%q is not in tools.allow, so it is never exposed", name)
		}
	}
}

func (v *validator) stdio(path string, u rawUpstream, line func(string) int) {
	if strings.TrimSpace(*u.Command) == "" {
		v.errorf(line("command"), path+".command", "is empty")
	}
	if u.Transport != "" && u.Transport != proxy.TransportStdio {
		v.errorf(line("transport"), path+".transport", "%q does not fit a command (a command is always stdio)", u.Transport)
	}
	v.only(path, u, line, "command", "args", "env", "cwd", "inherit_env")
}

func (v *validator) remote(path string, u rawUpstream, line func(string) int) {
	switch u.Transport {
	case "", proxy.TransportStreamableHTTP, proxy.TransportSSE:
	default:
		v.errorf(line("transport"), path+".transport", "%q is not streamable-http or sse", u.Transport)
	}
	if !strings.Contains(*u.URL, "${") { // checked again after expansion
		if err := checkURL(*u.URL); err != nil {
			v.errorf(line("url"), path+".url", "%v", err)
		}
	}
	v.only(path, u, line, "url", "headers", "auth")
	v.auth(path+".auth", u.Auth, line)
}

func (v *validator) auth(path string, a *rawAuth, line func(string) int) {
	if a == nil {
		return
	}
	switch a.AuthMethod {
	case "", "client_secret_basic", "client_secret_post", "none":
	default:
		v.errorf(line("auth"), path+".token_endpoint_auth_method", "%q is not client_secret_basic, client_secret_post or none", a.AuthMethod)
	}
	if a.ClientSecret != "" && a.ClientID == "" {
		v.errorf(line("auth"), path+".client_secret", "needs auth.client_id")
	}
	if a.ClientMetadataURL != "" && !strings.Contains(a.ClientMetadataURL, "${") && !strings.HasPrefix(a.ClientMetadataURL, "https://") {
		v.errorf(line("auth"), path+".client_metadata_url", "%q is not an https:// URL", a.ClientMetadataURL)
	}
	if a.RedirectURL != "" && !strings.HasPrefix(a.RedirectURL, "http://127.0.0.1:") && !strings.HasPrefix(a.RedirectURL, "http://localhost:") &&
		!strings.HasPrefix(a.RedirectURL, "http://[::1]:") {
		v.errorf(line("auth"), path+".redirect_url", "%q is not a loopback http URL with a port (http://127.0.0.1:PORT/PATH)", a.RedirectURL)
	}
	// token_exchange.token_endpoint: required, and a URL once it holds no variable.
	if te := a.TokenExchange; te != nil && te.TokenEndpoint == "" {
		v.errorf(line("auth"), path+".token_exchange.token_endpoint", "is required")
	} else if te != nil && !strings.Contains(te.TokenEndpoint, "${") {
		if err := checkURL(te.TokenEndpoint); err != nil {
			v.errorf(line("auth"), path+".token_exchange.token_endpoint", "%v", err)
		}
	}
}

// only reports keys of one upstream kind used on another (env on a remote server, say).
func (v *validator) only(path string, u rawUpstream, line func(string) int, allowed ...string) {
	for _, k := range []struct {
		key, owner string
		set        bool
	}{
		{"args", "command", len(u.Args) > 0}, {"env", "command", len(u.Env) > 0}, {"cwd", "command", u.Cwd != ""},
		{"inherit_env", "command", u.InheritEnv}, {"headers", "url", len(u.Headers) > 0}, {"auth", "url", u.Auth != nil},
	} {
		if k.set && !slices.Contains(allowed, k.key) {
			v.errorf(line(k.key), path+"."+k.key, "does not apply here (it goes with %s)", k.owner)
		}
	}
}

// checkExpandedURL checks a URL after ${VAR} expansion. An error names the URL as written, never as
// expanded: the variables may hold a key or a password (in the query or the userinfo).
func checkExpandedURL(val, written string) error {
	if val == written {
		return checkURL(val)
	}
	if checkURL(val) != nil {
		return fmt.Errorf("%q, once its variables are expanded, is not an http:// or https:// URL with a host", written)
	}
	return nil
}

func checkURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("%q is not a URL: %v", raw, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("%q: the URL must start with http:// or https://", raw)
	}
	if u.Host == "" {
		return fmt.Errorf("%q: the URL has no host", raw)
	}
	return nil
}

func (v *validator) routing(path string, profile *yaml.Node, r rawRouting) Routing {
	node := valueNode(profile, "routing")
	line := func(key string) int { return keyLine(node, key, keyLine(profile, "routing", 1)) }
	out, fe := resolveRouting(r)
	if fe != nil {
		v.errorf(line(fe.key), path+"."+fe.key, "%v", fe.err)
	}
	return out
}

type fieldError struct {
	key string
	err error
}

// resolveRouting takes what the file sets and checks the ranges. A 0 written stays zero for the
// router (negative here).
func resolveRouting(r rawRouting) (Routing, *fieldError) {
	out := defaultRouting()
	if r.Mode != "" {
		if r.Mode != "routed" && r.Mode != "all" {
			return out, &fieldError{"mode", fmt.Errorf("%q is not routed or all", r.Mode)}
		}
		out.Mode = r.Mode
	}
	if err := routingNumbers(r, &out); err != nil {
		return out, err
	}
	if r.Lessons != nil {
		out.Lessons = *r.Lessons
	}
	if r.SharedLessons != nil {
		out.SharedLessons = *r.SharedLessons
	}
	if r.DiscoveryPrefixes != nil {
		out.DiscoveryPrefixes = append([]string{}, *r.DiscoveryPrefixes...) // empty, never nil: boundary loading off
	}
	if r.Breaker.ResetAfter > 0 {
		out.ResetAfter = time.Duration(r.Breaker.ResetAfter)
	}
	if r.Fuse == nil {
		return out, nil
	}
	p, err := fusePolicy(r.Fuse)
	out.Fuse = &p
	return out, err
}

// fusePolicy is routing.fuse, with the router's noise floor unless set.
func fusePolicy(m map[string]any) (fuse.Policy, *fieldError) {
	if _, set := m["min_qr_score"]; !set {
		m["min_qr_score"] = routing.DefaultNoiseFloor
	}
	p, err := fuse.PolicyFromMap(m)
	if err != nil {
		var fe *fuse.FieldError
		if errors.As(err, &fe) {
			return routing.DefaultFusePolicy(), &fieldError{"fuse." + fe.Key, fe.Err}
		}
		return routing.DefaultFusePolicy(), &fieldError{"fuse", err}
	}
	return p, nil
}

// routingNumbers sets the numbers the file gives, within their ranges. A multiplier of 0 would
// erase every score, so the affinities must be above it.
func routingNumbers(r rawRouting, out *Routing) *fieldError {
	floats := []struct {
		key      string
		src      *float64
		dst      *float64
		lo, hi   float64
		positive bool
	}{
		{"threshold", r.Threshold, &out.Threshold, 0, 1, false},
		{"collision_delta", r.CollisionDelta, &out.CollisionDelta, 0, 1, false},
		{"abstain_coverage", r.AbstainCoverage, &out.AbstainCoverage, 0, 1, false},
		{"abstain_commitment", r.AbstainCommitment, &out.AbstainCommitment, 0, 1, false},
		{"abstain_advice", r.AbstainAdvice, &out.AbstainAdvice, 0, 1, false},
		{"keep_coverage", r.KeepCoverage, &out.KeepCoverage, 0, 1, false},
		{"affinity.same_domain", r.Affinity.SameDomain, &out.SameDomain, 0, 10, true},
		{"affinity.cross_domain", r.Affinity.CrossDomain, &out.CrossDomain, 0, 10, true},
		{"semantic_weight", r.SemanticWeight, &out.SemanticWeight, 0, 1, false},
	}
	for _, c := range floats {
		switch {
		case c.src == nil:
		case *c.src < c.lo || *c.src > c.hi:
			return &fieldError{c.key, fmt.Errorf("%g is outside [%g, %g]", *c.src, c.lo, c.hi)}
		case c.positive && *c.src == 0:
			return &fieldError{c.key, fmt.Errorf("0 would erase every score; use a multiplier above 0 (1 is none)")}
		default:
			*c.dst = cmp.Or(*c.src, -1) // 0 written: zero, not the router's default
		}
	}
	ints := []struct {
		key      string
		src, dst *int
		lo       int
	}{
		{"top_k", r.TopK, &out.TopK, 0},
		{"max_tools", r.MaxTools, &out.MaxTools, 1},
		{"breaker.max_discoveries", r.Breaker.MaxDiscoveries, &out.MaxDiscoveries, 1},
	}
	for _, c := range ints {
		switch {
		case c.src == nil:
		case *c.src < c.lo:
			return &fieldError{c.key, fmt.Errorf("%d is below %d", *c.src, c.lo)}
		default:
			*c.dst = cmp.Or(*c.src, -1)
		}
	}
	return nil
}

// keyLine is the line of key in mapping n, else fallback.
func keyLine(n *yaml.Node, key string, fallback int) int {
	if n != nil && n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == key {
				return n.Content[i].Line
			}
		}
	}
	return fallback
}

// valueNode is the value of key in mapping n, or nil.
func valueNode(n *yaml.Node, key string) *yaml.Node {
	if n != nil && n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == key {
				return n.Content[i+1]
			}
		}
	}
	return nil
}

func (c *Config) hasProfile(name string) bool {
	_, ok := c.profiles[name]
	return ok
}

// rawApprovals is a profile's approvals section: which calls a person must approve.
type rawApprovals struct {
	Destructive        bool          `yaml:"destructive"`
	Tools              []string      `yaml:"tools"`
	WithoutElicitation string        `yaml:"without_elicitation"`
	Timeout            DurationValue `yaml:"timeout"`
}

// approvals checks a profile's approvals section (path names it) and returns it resolved: a glob
// path.Match cannot use, or a mode it does not know, is an error naming the key.
func (v *validator) approvals(path string, profile *yaml.Node, a rawApprovals) approval.Policy {
	node := valueNode(profile, "approvals")
	line := func(key string) int { return keyLine(node, key, keyLine(profile, "approvals", 1)) }
	p := approval.Policy{Destructive: a.Destructive, Tools: a.Tools, Timeout: time.Duration(a.Timeout)}
	for _, g := range a.Tools {
		if err := approval.CheckGlob(g); err != nil {
			v.errorf(line("tools"), path+".tools", "%v", err)
		}
	}
	mode, err := approval.ParseMode(a.WithoutElicitation)
	if err != nil {
		v.errorf(line("without_elicitation"), path+".without_elicitation", "%v", err)
	}
	p.WithoutElicitation = mode
	return p
}
