package config

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/mcp-router/mcp-router/proxy"
	"github.com/mcp-router/mcp-router/proxy/integrity"
	"github.com/mcp-router/mcp-router/proxy/upstreamauth"
)

// resolve turns one validated profile into what the proxy runs: variables expanded, defaults
// applied, disabled upstreams left out.
func (c *Config) resolve(name string, e entry[rawProfile]) (Profile, error) {
	p := Profile{Name: name, CoreTools: e.Value.CoreTools, Lines: map[string]int{}}
	p.Routing = c.routing[name] // resolved at load
	p.Approvals = c.approval[name]
	p.Routing.DiscoveryPrefixes = slices.Clone(p.Routing.DiscoveryPrefixes)
	if f := p.Routing.Fuse; f != nil { // each profile its own, as it is its own slice; nil: the router's default
		policy := *f
		p.Routing.Fuse = &policy
	}
	in := e.Value.Integrity
	p.Integrity = Integrity{Pins: in.Pins == nil || *in.Pins, Poisoning: in.Poisoning, Results: in.Results}
	pl := e.Value.Planner
	p.Planner = Planner{Prompt: pl.Prompt, SensitiveTopics: pl.SensitiveTopics, Timeout: time.Duration(pl.Timeout)}
	if p.Planner.Prompt != "" {
		prompt, err := Expand(p.Planner.Prompt, c.getenv)
		if err != nil {
			return Profile{}, fmt.Errorf("%s: profiles.%s.planner.prompt: %w", c.File, name, err)
		}
		p.Planner.Prompt = c.relative(prompt)
	}
	for _, b := range c.broken[name] {
		p.Disabled = append(p.Disabled, b.disabled())
		p.Lines[b.name] = b.line
	}
	for _, u := range e.Value.Upstreams {
		if u.Value.Enabled == nil || *u.Value.Enabled {
			c.addUpstream(&p, e.Value, u)
		}
	}
	return p, nil
}

// addUpstream adds one upstream entry of profile rp to p, resolved; or, when its variables cannot
// be expanded, disabled: one bad entry costs only its upstream.
func (c *Config) addUpstream(p *Profile, rp rawProfile, u entry[rawUpstream]) {
	x := &expander{getenv: c.getenv, file: c.File, path: "profiles." + p.Name + ".upstreams." + u.Key, entry: u}
	cfg := x.upstream()
	p.Lines[u.Key] = u.Line
	if err := x.err(); err != nil {
		p.Disabled = append(p.Disabled, proxy.DisabledUpstream{Name: u.Key, Description: cfg.Description,
			Domain: cfg.Domain, Prefix: cfg.Prefix, Err: err, Reason: reasonFor(err)})
		return
	}
	cfg.Results = cmp.Or(cfg.Results, integrity.ResultPolicy(rp.Integrity.Results))
	if u.Value.ValidateArguments == nil {
		cfg.ValidateArguments = rp.ValidateArguments
	}
	c.Limits.upstream(&cfg)
	p.Upstreams = append(p.Upstreams, cfg)
}

// reasonFor says why an upstream is disabled in words the model may read: the variables that are
// not set, never a path or a value.
func reasonFor(err error) string {
	var names []string
	errs := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	}
	for _, e := range errs {
		var unset *UnsetError
		if errors.As(e, &unset) && !slices.Contains(names, unset.Name) {
			names = append(names, unset.Name)
		}
	}
	switch len(names) {
	case 0:
		return "an error in its entry"
	case 1:
		return "environment variable " + names[0] + " is not set"
	}
	return "environment variables " + strings.Join(names, ", ") + " are not set"
}

// UnsetError is a ${VAR} whose variable is not set and has no fallback.
type UnsetError struct{ Name string }

func (e *UnsetError) Error() string {
	return fmt.Sprintf("environment variable %s is not set (use ${%s:-default} for a fallback)", e.Name, e.Name)
}

// expander expands ${VAR} in one upstream's strings and builds its config.
type expander struct {
	getenv func(string) (string, bool)
	file   string
	path   string
	entry  entry[rawUpstream]
	errs   []error
}

func (x *expander) err() error { return errors.Join(x.errs...) }

func (x *expander) expand(key, s string) string {
	out, err := Expand(s, x.getenv)
	if err != nil {
		line := keyLine(x.entry.Node, strings.SplitN(key, ".", 2)[0], x.entry.Line)
		x.errs = append(x.errs, fmt.Errorf("%s:%d: %s.%s: %w", x.file, line, x.path, key, err))
	}
	return out
}

func (x *expander) upstream() proxy.UpstreamConfig {
	u := x.entry.Value
	cfg := proxy.UpstreamConfig{
		Name:     x.entry.Key,
		Domain:   u.Domain,
		Timeout:  time.Duration(u.Timeout),
		Allow:    u.Tools.Allow,
		Deny:     u.Tools.Deny,
		Protocol: u.Protocol,
		Prefix:   x.entry.Key + "_",
		Results:  integrity.ResultPolicy(u.Results),

		DefaultPrefix:  u.Prefix == nil,
		ConnectTimeout: time.Duration(u.ConnectTimeout),  // zero: limits.connect_timeout
		Description:    strings.TrimSpace(u.Description), // shown as written, never expanded

		MaxTimeout: time.Duration(u.MaxTimeout), // the hard maximum over progress (FI-06)

		TrustAnnotations: u.TrustAnnotations,
		ReadOnlyTools:    u.ReadOnlyTools,
	}
	if u.Prefix != nil {
		cfg.Prefix = *u.Prefix
	}
	if u.ValidateArguments != nil {
		cfg.ValidateArguments = *u.ValidateArguments // BI-07
	}
	for i, a := range u.Args {
		cfg.Args = append(cfg.Args, x.expand(fmt.Sprintf("args[%d]", i), a))
	}
	switch {
	case u.Command != nil:
		cfg.Transport = proxy.TransportStdio
		cfg.Command = x.expand("command", *u.Command)
		cfg.Cwd = x.expand("cwd", u.Cwd)
		cfg.Env = x.expandMap("env", u.Env)
		cfg.InheritEnv = u.InheritEnv
	case u.URL != nil:
		cfg.Transport = cmp.Or(u.Transport, proxy.TransportStreamableHTTP)
		cfg.URL = x.expand("url", *u.URL)
		if err := checkExpandedURL(cfg.URL, *u.URL); err != nil && len(x.errs) == 0 {
			x.errs = append(x.errs, fmt.Errorf("%s:%d: %s.url: %w", x.file, keyLine(x.entry.Node, "url", x.entry.Line), x.path, err))
		}
		cfg.Headers = x.expandMap("headers", u.Headers)
		cfg.Auth = x.auth(u.Auth)
	default:
		cfg.Transport = proxy.TransportBuiltin
		cfg.Builtin = *u.Builtin
	}
	return cfg
}

func (x *expander) expandMap(key string, m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out[k] = x.expand(key+"."+k, m[k])
	}
	return out
}

// Expand replaces ${VAR} and ${VAR:-fallback} with values from getenv; $${ is a literal ${ and a
// lone $ is kept. An unset variable without fallback is an error naming it, and so is a value
// holding "${": a placeholder passed on unexpanded must not become a literal password.
func Expand(s string, getenv func(string) (string, bool)) (string, error) {
	if !strings.Contains(s, "$") {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		switch {
		case strings.HasPrefix(s[i:], "$${"):
			b.WriteString("${")
			i += 3
		case strings.HasPrefix(s[i:], "${"):
			end := strings.IndexByte(s[i:], '}')
			if end < 0 {
				return "", fmt.Errorf("%q: unclosed ${", s)
			}
			val, err := lookup(s[i+2:i+end], getenv)
			if err != nil {
				return "", err
			}
			b.WriteString(val)
			i += end + 1
		default:
			b.WriteByte(s[i])
			i++
		}
	}
	return b.String(), nil
}

func lookup(expr string, getenv func(string) (string, bool)) (string, error) {
	if strings.Contains(expr, "${") {
		return "", fmt.Errorf("${%s}: nested variables are not expanded (write the fallback itself)", expr)
	}
	name, fallback, hasFallback := strings.Cut(expr, ":-")
	if !validVarName(name) {
		return "", fmt.Errorf("${%s}: %q is not a variable name", expr, name)
	}
	if v, ok := getenv(name); ok && (v != "" || !hasFallback) {
		if strings.Contains(v, "${") {
			return "", fmt.Errorf("environment variable %s holds %q: variables are expanded once, so set it to the value itself", name, redactPlaceholder(v))
		}
		return v, nil
	}
	if hasFallback {
		return fallback, nil
	}
	return "", &UnsetError{Name: name}
}

// redactPlaceholder shows the "${...}" parts of a variable's value and hides the rest (a secret?).
func redactPlaceholder(v string) string {
	var b strings.Builder
	for rest := v; ; {
		i := strings.Index(rest, "${")
		if i < 0 {
			if rest != "" {
				b.WriteString("…")
			}
			return b.String()
		}
		if i > 0 {
			b.WriteString("…")
		}
		end := strings.IndexByte(rest[i:], '}')
		if end < 0 || end > 64 {
			b.WriteString("${…")
			return b.String()
		}
		b.WriteString(rest[i : i+end+1])
		rest = rest[i+end+1:]
	}
}

var varName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func validVarName(s string) bool { return varName.MatchString(s) }

// relative resolves a path in the file against the file's folder.
func (c *Config) relative(path string) string {
	if filepath.IsAbs(path) || c.File == DefaultName {
		return path
	}
	return filepath.Join(filepath.Dir(c.File), path)
}

func (x *expander) auth(a *rawAuth) *upstreamauth.Config {
	if a == nil {
		return nil
	}
	c := &upstreamauth.Config{
		ClientID:          x.expand("auth.client_id", a.ClientID),
		ClientSecret:      x.expand("auth.client_secret", a.ClientSecret),
		AuthMethod:        a.AuthMethod,
		ClientMetadataURL: x.expand("auth.client_metadata_url", a.ClientMetadataURL),
		Scopes:            a.Scopes,
		RedirectURL:       a.RedirectURL,
		PerUser:           a.PerUser,
	}
	if te := a.TokenExchange; te != nil {
		c.TokenExchange = &upstreamauth.TokenExchange{
			TokenEndpoint:    x.expand("auth.token_exchange.token_endpoint", te.TokenEndpoint),
			ClientID:         x.expand("auth.token_exchange.client_id", te.ClientID),
			ClientSecret:     x.expand("auth.token_exchange.client_secret", te.ClientSecret),
			Audience:         te.Audience,
			Scope:            te.Scope,
			Resource:         te.Resource,
			SubjectTokenType: te.SubjectTokenType,
		}
	}
	return c
}
