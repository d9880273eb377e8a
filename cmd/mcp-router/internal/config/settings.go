package config

import (
	"cmp"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/viper"
	"go.yaml.in/yaml/v3"
)

// DefaultOllamaURL is ollama.url when neither the file nor MCP_ROUTER_OLLAMA_URL sets it.
const DefaultOllamaURL = "http://127.0.0.1:11434"

// layered is the overridable settings: the file's values under the MCP_ROUTER_* variables that are
// set, in viper, which reads a variable's text as the setting's type ("true", "1").
type layered struct {
	v       *viper.Viper
	fromEnv map[string]string // key: the variable that set it
	file    string
	root    *yaml.Node
	getenv  func(string) (string, bool)
	errs    []error
}

func layer(file string, root *yaml.Node, raw *rawConfig, getenv func(string) (string, bool)) *layered {
	l := &layered{v: viper.New(), fromEnv: map[string]string{}, file: file, root: root, getenv: getenv}
	// The settings an MCP_ROUTER_<SECTION>_<KEY> variable overrides (docs/reference.md lists them),
	// with the file's values.
	for key, val := range map[string]any{
		"default_profile": raw.DefaultProfile, "log.level": cmp.Or(raw.Log.Level, "info"), "log.wire": raw.Log.Wire,
		"log.trace_file": raw.Log.TraceFile, "state_dir": raw.StateDir, "state.url": raw.State.URL,
		"state.required": raw.State.Required, "http.session_key": raw.HTTP.SessionKey,
		"ollama.url": cmp.Or(raw.Ollama.URL, DefaultOllamaURL), "ollama.embed_model": raw.Ollama.EmbedModel,
		"ollama.chat_model": raw.Ollama.ChatModel,
	} {
		l.v.SetDefault(key, val)
		env := "MCP_ROUTER_" + strings.ToUpper(strings.ReplaceAll(key, ".", "_"))
		if s, ok := getenv(env); ok {
			l.v.Set(key, s)
			l.fromEnv[key] = env
		}
	}
	return l
}

// where names a setting in messages: its variable when one set it, else its line in the file.
func (l *layered) where(key string) string {
	if env, ok := l.fromEnv[key]; ok {
		return env
	}
	return fmt.Sprintf("%s:%d: %s", l.file, settingLine(l.root, strings.Split(key, ".")...), key)
}

// get returns a setting, ${VAR} expanded when expand is set and it comes from the file. A
// variable's value holding "${" is refused: a client that does not expand variables passed it on.
func (l *layered) get(key string, expand bool) string {
	val := l.v.GetString(key)
	if env, ok := l.fromEnv[key]; ok {
		if strings.Contains(val, "${") {
			l.errs = append(l.errs, fmt.Errorf("%s (overriding %s): %q holds \"${\"; its value is used as it is, so set the variable to the value itself", env, key, redactPlaceholder(val)))
		}
		return val
	}
	if !expand {
		return val
	}
	out, err := Expand(val, l.getenv)
	if err != nil {
		l.errs = append(l.errs, fmt.Errorf("%s: %w", l.where(key), err))
	}
	return out
}

// boolean returns a yes-or-no setting; a variable whose text is not a boolean is refused, not
// read as false.
func (l *layered) boolean(key string) bool {
	if env, ok := l.fromEnv[key]; ok {
		if _, err := strconv.ParseBool(l.v.GetString(key)); err != nil {
			l.errs = append(l.errs, fmt.Errorf("%s (overriding %s): %q is not true or false", env, key, l.v.GetString(key)))
		}
	}
	return l.v.GetBool(key)
}

// settings sets the top-level settings, MCP_ROUTER_* variables over the file, ${VAR} expanded.
func (c *Config) settings(file string, root *yaml.Node, raw *rawConfig, getenv func(string) (string, bool)) error {
	l := layer(file, root, raw, getenv)
	c.DefaultProfile = l.get("default_profile", false)
	c.Log = Log{Level: strings.ToLower(l.get("log.level", false)), Wire: l.boolean("log.wire"), TraceFile: l.get("log.trace_file", true)}
	if val, ok := getenv("DEBUG_WIRE_LOG"); ok && strings.EqualFold(val, "true") {
		c.Log.Wire = true
	}
	c.Ollama = Ollama{URL: l.get("ollama.url", true), EmbedModel: l.get("ollama.embed_model", true), ChatModel: l.get("ollama.chat_model", true)}
	l.errs = append(l.errs, c.httpSettings(raw.HTTP, l)...)
	if !slices.Contains(LogLevels, c.Log.Level) {
		l.errs = append(l.errs, fmt.Errorf("%s: %q is not one of %s", l.where("log.level"), c.Log.Level, strings.Join(LogLevels, ", ")))
	}
	configured := l.get("state_dir", true)
	c.State = State{URL: l.get("state.url", true), Required: l.boolean("state.required")}
	if err := checkStateURL(c.State.URL); err != nil {
		l.errs = append(l.errs, fmt.Errorf("%s: %w", l.where("state.url"), err))
	}
	if err := errors.Join(l.errs...); err != nil {
		return err
	}
	dir, err := stateDir(configured)
	if err != nil {
		return fmt.Errorf("%s: state_dir: %w", file, err)
	}
	c.StateDir = dir
	return nil
}

// httpSettings sets the http section's lists and session key and returns what is wrong with the
// hosts and origins as written; problems after expansion are kept for CheckHTTP.
func (c *Config) httpSettings(raw rawHTTP, l *layered) []error {
	var errs []error
	file, root, getenv := l.file, l.root, l.getenv
	c.HTTP = HTTP{BearerTokens: raw.BearerTokens, AllowedOrigins: raw.AllowedOrigins, AllowedHosts: raw.AllowedHosts}
	for _, o := range c.HTTP.AllowedOrigins {
		if !strings.Contains(o, "$") { // with a variable, checked once expanded
			if err := checkOrigin(o); err != nil {
				errs = append(errs, fmt.Errorf("%s:%d: http.allowed_origins: %w", file, settingLine(root, "http", "allowed_origins"), err))
			}
		}
	}
	for i, h := range c.HTTP.AllowedHosts {
		if err := checkHost(h); err != nil {
			errs = append(errs, fmt.Errorf("%s:%d: http.allowed_hosts[%d]: %w", file, settingLine(root, "http", "allowed_hosts", strconv.Itoa(i)), i, err))
		}
	}
	c.httpErr = c.HTTP.expand(file, root, getenv)
	c.HTTP.SessionKey = l.v.GetString("http.session_key")
	if _, ok := l.fromEnv["http.session_key"]; !ok {
		key, err := Expand(c.HTTP.SessionKey, getenv)
		if err != nil {
			c.httpErr = errors.Join(c.httpErr, fmt.Errorf("%s: %w", l.where("http.session_key"), err))
		}
		c.HTTP.SessionKey = key
	}
	return errs
}

// Audit is the audit section: where the record of each call goes besides the state store.
type Audit struct {
	// File is the JSON-lines file; "" writes none.
	File string
	// MaxBytes is the size past which File rotates; zero takes audit.DefaultMaxBytes.
	MaxBytes int64
	// Keep is how many rotated files are kept; zero takes audit.DefaultKeep.
	Keep int
}

type rawAudit struct {
	File     string    `yaml:"file"`
	MaxBytes sizeValue `yaml:"max_bytes"`
	Keep     sizeValue `yaml:"keep"`
}

func (c *Config) audit(raw rawAudit) {
	c.Audit = Audit{File: raw.File, MaxBytes: int64(raw.MaxBytes), Keep: int(raw.Keep)}
}

// Tracing is the tracing section: OpenTelemetry spans over OTLP/HTTP, off without OTLPEndpoint.
type Tracing struct {
	// OTLPEndpoint is the URL spans are posted to; one without a path gets the standard /v1/traces.
	OTLPEndpoint string
	// ServiceName is the service.name of the spans ["mcp-router"].
	ServiceName string
}

type rawTracing struct {
	OTLPEndpoint *lineString `yaml:"otlp_endpoint"`
	ServiceName  string      `yaml:"service_name"`
}

func (c *Config) tracing(v *validator, raw rawTracing) {
	c.Tracing = Tracing{ServiceName: cmp.Or(raw.ServiceName, "mcp-router")}
	if raw.OTLPEndpoint == nil || raw.OTLPEndpoint.S == "" {
		return
	}
	u, err := url.Parse(raw.OTLPEndpoint.S)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		v.errorf(raw.OTLPEndpoint.Line, "tracing.otlp_endpoint", "%q is not an http(s) URL (like http://127.0.0.1:4318)", raw.OTLPEndpoint.S)
		return
	}
	if strings.Trim(u.Path, "/") == "" {
		u.Path = "/v1/traces"
	}
	c.Tracing.OTLPEndpoint = u.String()
}
