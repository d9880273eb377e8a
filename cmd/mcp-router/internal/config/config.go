// Package config reads profiles.yaml: where it is found, what it may say, and how it becomes the
// settings the proxy runs with. Every error names the file, the line and the key. The file is
// decoded once, from its YAML node tree (only it knows line numbers and keeps the case of variable
// and header names); viper layers the MCP_ROUTER_* variables over the top-level settings.
package config

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/mcp-router/mcp-router/proxy"
	"github.com/mcp-router/mcp-router/proxy/approval"
	"github.com/mcp-router/mcp-router/proxy/frontdoor"
)

// DefaultName is what File says when the built-in default configuration is used.
const DefaultName = "(built-in default profiles.yaml)"

// LoadOptions says where to look and what to use for a Load.
type LoadOptions struct {
	// Path is the file to read; "" searches SearchDirs for profiles.yaml, then falls back to
	// Default.
	Path string
	// SearchDirs are searched in order when Path is "".
	SearchDirs []string
	// Default is the configuration used when no file is found.
	Default []byte
	// Getenv looks variables up for ${VAR} and the MCP_ROUTER_* overrides; nil means os.LookupEnv.
	Getenv func(string) (string, bool)
	// Builtins are the built-in server names an upstream may name.
	Builtins []string
}

// Config is a parsed, structurally valid profiles.yaml. Variables are expanded per profile, by
// Profile, so that a variable used only by a profile you are not running need not be set.
type Config struct {
	// File is the path read, or DefaultName.
	File           string
	DefaultProfile string
	Log            Log
	// StateDir is where caches and persisted state go, resolved to an absolute directory (the user
	// state directory when unset).
	StateDir string
	// State is where the shared state is kept instead of state.db.
	State   State
	HTTP    HTTP
	Limits  Limits
	Ollama  Ollama
	Audit   Audit
	Tracing Tracing
	// Warnings are problems that do not stop the gateway.
	Warnings []string

	profiles map[string]entry[rawProfile]
	routing  map[string]Routing         // each profile's, resolved at load
	approval map[string]approval.Policy // each profile's approvals, resolved at load
	// broken are the upstream entries left out for their own errors, by profile: disabled alone
	// (broken.go).
	broken  map[string][]brokenUpstream
	names   []string // profile names in file order
	getenv  func(string) (string, bool)
	httpErr error // from expanding the http section; see CheckHTTP
}

// Log is the log section (decoded as written too: rawConfig).
type Log struct {
	Level string `yaml:"level"`
	// Wire logs each routing decision at debug level.
	Wire bool `yaml:"wire"`
	// TraceFile, when set, receives each routing decision as a JSON line.
	TraceFile string `yaml:"trace_file"`
}

// HTTP is the http section, for serve --http.
type HTTP struct {
	BearerTokens   []string
	AllowedOrigins []string
	// AllowedHosts are Host header names (port optional) allowed besides loopback ones, for a
	// gateway reached by another name (a Kubernetes Service, a load balancer).
	AllowedHosts []string
	// DisconnectGrace is how long a call goes on after its client drops the response stream without
	// cancelling; zero takes proxy.DefaultDisconnectGrace, negative (the file's 0) cancels at once.
	DisconnectGrace time.Duration
	// Bounds limit each client's connections, sessions and bodies.
	Bounds HTTPBounds
	// Tokens are bearer tokens that name the profile they are served (variables expanded, like
	// BearerTokens).
	Tokens []frontdoor.Token
	// OIDC accepts JWTs from an issuer; nil when not configured.
	OIDC *frontdoor.OIDCOptions
	// SessionKey, base64 of 32 bytes (variables expanded), seals session ids and signs handles;
	// replicas behind one endpoint share it. "" draws a key per process.
	SessionKey string
	// TrustedProxies are the reverse proxies (addresses and CIDR blocks) whose X-Forwarded-For
	// names the client, for the limits per client and the log; empty trusts none.
	TrustedProxies []netip.Prefix
}

// State is the state section (decoded as written too: rawConfig).
type State struct {
	// URL is a postgres:// URL (variables expanded) of the state shared by every gateway using it;
	// "" keeps it in state.db under StateDir. Print it with [RedactURL]: it may hold a password.
	URL string `yaml:"url"`
	// Required makes serve fail when the state cannot be opened, rather than keep it in memory for
	// the run: replicas that share a database must not go on alone.
	Required bool `yaml:"required"`
}

// Ollama is the ollama section: optional local models.
type Ollama struct {
	URL        string `yaml:"url"`
	EmbedModel string `yaml:"embed_model"`
	ChatModel  string `yaml:"chat_model"`
}

// Profile is one resolved profile: variables expanded, defaults applied.
type Profile struct {
	Name      string
	Upstreams []proxy.UpstreamConfig
	CoreTools []string
	Routing   Routing
	Planner   Planner
	Integrity Integrity
	// Approvals says which calls a person must approve.
	Approvals approval.Policy
	// Disabled are the upstreams whose entry could not be used (a variable not set, say): left out,
	// each with its error, while the rest of the profile runs.
	Disabled []proxy.DisabledUpstream
	// Lines maps each upstream name to its line in File, for messages.
	Lines map[string]int
}

// Load finds, reads and validates the configuration. Every profile is checked for structure;
// variables are expanded later, by Profile.
func Load(opts LoadOptions) (*Config, error) {
	if opts.Getenv == nil {
		opts.Getenv = os.LookupEnv
	}
	file, data, err := find(opts)
	if err != nil {
		return nil, err
	}
	return parse(file, data, opts)
}

func find(opts LoadOptions) (string, []byte, error) {
	if opts.Path != "" {
		data, err := os.ReadFile(opts.Path)
		if err != nil {
			return "", nil, fmt.Errorf("reading config: %w", err)
		}
		return opts.Path, data, nil
	}
	for _, dir := range opts.SearchDirs {
		path := filepath.Join(dir, "profiles.yaml")
		data, err := os.ReadFile(path)
		if err == nil {
			return path, data, nil
		}
		if !errors.Is(err, os.ErrNotExist) {
			return "", nil, fmt.Errorf("reading config: %w", err)
		}
	}
	if opts.Default == nil {
		return "", nil, errors.New("no profiles.yaml found and no built-in default")
	}
	return DefaultName, opts.Default, nil
}

func parse(file string, data []byte, opts LoadOptions) (*Config, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, syntaxError(file, data, err)
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	if root.Kind == 0 { // an empty file
		return nil, fmt.Errorf("%s: the file is empty; it needs at least a profiles section", file)
	}
	broken := isolateUpstreams(file, root)
	var raw rawConfig
	d := &decoder{validator{file: file}}
	d.decode(root, "", &raw)
	if err := d.err(); err != nil {
		return nil, err
	}
	cfg := &Config{File: file, getenv: opts.Getenv, profiles: map[string]entry[rawProfile]{}, broken: broken}
	if err := checkUnexpanded(file, root); err != nil {
		return nil, err
	}
	if err := cfg.settings(file, root, &raw, opts.Getenv); err != nil {
		return nil, err
	}
	v := &validator{file: file, builtins: opts.Builtins}
	cfg.validate(v, &raw)
	cfg.identity(v, root, raw.HTTP)
	if err := v.err(); err != nil {
		return nil, err
	}
	cfg.Warnings = v.warnings
	return cfg, nil
}

// checkStateURL says what is wrong with a state.url, without repeating the password it may hold.
func checkStateURL(raw string) error {
	if raw == "" {
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("not a URL (postgres://user:password@host/database)")
	}
	switch {
	case u.Scheme != "postgres" && u.Scheme != "postgresql":
		return fmt.Errorf("%q: the scheme must be postgres://", RedactURL(raw))
	case u.Host == "":
		return fmt.Errorf("%q: no host", RedactURL(raw))
	case strings.Trim(u.Path, "/") == "":
		return fmt.Errorf("%q: no database (postgres://host/database)", RedactURL(raw))
	}
	return nil
}

// RedactURL returns a state.url for messages: the password, if any, as xxxxx.
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(a URL that does not parse)"
	}
	return u.Redacted()
}

// LogLevels are the values of log.level and --log-level.
var LogLevels = []string{"debug", "info", "warn", "error"}

// CheckHTTP reports what is wrong with the http section once expanded (a variable not set, an empty
// token, a bad origin): only serve --http needs it, so the problem stops no other command.
func (c *Config) CheckHTTP() error { return c.httpErr }

// stateDir resolves the state directory: the configured one (with ~ expanded), else
// $XDG_STATE_HOME/mcp-router, else the platform's per-user application-state folder.
func stateDir(configured string) (string, error) {
	if configured != "" {
		if rest, ok := strings.CutPrefix(configured, "~/"); ok {
			home, err := os.UserHomeDir()
			if err != nil {
				return "", err
			}
			configured = filepath.Join(home, rest)
		}
		return filepath.Abs(configured)
	}
	if x := os.Getenv("XDG_STATE_HOME"); x != "" {
		return filepath.Join(x, "mcp-router"), nil
	}
	switch runtime.GOOS {
	case "darwin", "windows":
		d, err := os.UserConfigDir()
		if err != nil {
			return "", err
		}
		return filepath.Join(d, "mcp-router", "state"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, ".local", "state", "mcp-router"), nil
}

// Profile resolves the named profile ("" = default_profile, else the only profile, else "default"):
// variables expanded, defaults applied.
func (c *Config) Profile(name string) (Profile, error) {
	rp, err := c.rawProfile(name)
	if err != nil {
		return Profile{}, err
	}
	return c.resolve(rp.Key, rp)
}

// Planner is a profile's planner section (used with ollama.chat_model).
type Planner struct {
	// Prompt is a file replacing the embedded decision prompt; "" = embedded.
	Prompt          string
	SensitiveTopics []string
	Timeout         time.Duration
}

// Integrity is a profile's integrity section.
type Integrity struct {
	// Pins pins each tool's contract under state_dir and blocks changed ones until approved
	// (default true).
	Pins bool
	// Poisoning is "warn" (default) or "quarantine".
	Poisoning string
	// Results is what to do with secrets and injection markers in tool results: "off", "warn",
	// "redact" (default) or "block"; an upstream's own results key overrides it.
	Results string
}

// DurationValue is a Go duration in YAML ("30s", "2m").
type DurationValue time.Duration

// UnmarshalYAML parses a Go duration string.
func (d *DurationValue) UnmarshalYAML(n *yaml.Node) error {
	v, err := time.ParseDuration(n.Value)
	if err != nil || v <= 0 {
		return fmt.Errorf("%q is not a positive Go duration (like 30s or 2m)", n.Value)
	}
	*d = DurationValue(v)
	return nil
}

// checkHost accepts a Host header value: a name or IP, port optional, nothing else.
func checkHost(h string) error {
	u, err := url.Parse("http://" + h)
	if h == "" || err != nil || u.Host != h || u.User != nil || strings.ContainsAny(h, "*/ ") {
		return fmt.Errorf("%q is not a host like mcp-router.example.com or mcp-router:8080 (no scheme, path or wildcards)", h)
	}
	return nil
}

// checkOrigin accepts an exact browser origin: scheme://host[:port].
func checkOrigin(o string) error {
	u, err := url.Parse(o)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
		return fmt.Errorf("%q is not an origin like https://app.example.com or http://localhost:3000 (no wildcards, no path)", o)
	}
	return nil
}
