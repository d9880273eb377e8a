package upstream

import (
	"cmp"
	"fmt"
	"log/slog"
	"net/url"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-router/mcp-router/proxy/integrity"
	"github.com/mcp-router/mcp-router/proxy/upstreamauth"
)

// Transport kinds an upstream can use.
const (
	TransportStdio          = "stdio"
	TransportStreamableHTTP = "streamable-http"
	TransportSSE            = "sse"
	TransportBuiltin        = "builtin"
)

// DefaultProtocolVersion is the MCP protocol version upstream clients pin by
// default (decision 3 in docs/design.md).
const DefaultProtocolVersion = "2025-11-25"

// Config describes one upstream MCP server, decoded and validated by the
// caller. Zero values take the defaults in brackets.
type Config struct {
	Name      string // the upstream's key in the profile
	Transport string // one of the Transport* constants

	// Command, Args, Env and Cwd start a stdio child. Env is added to a
	// minimal environment (PATH, HOME and friends).
	Command string
	Args    []string
	Env     map[string]string
	Cwd     string
	// InheritEnv gives the child the gateway's whole environment.
	InheritEnv bool

	// URL and Headers reach a streamable-HTTP or SSE server.
	URL        string
	Headers    map[string]string
	Auth       *upstreamauth.Config // OAuth settings (nil: none), of which the caller makes Authorizer
	Authorizer *upstreamauth.Authorizer

	// Builtin names a built-in server run in-process; Args are its flags.
	Builtin string

	Prefix string // prepended to every tool and prompt name ("" for none)
	Domain string // the topical domain for routing; defaults to Name
	// Description says what the upstream is for; routing indexes it with
	// each tool, and the model is shown it.
	Description string
	// DefaultPrefix marks Prefix as the default "<name>_", not added to
	// tools that start with it already.
	DefaultPrefix bool
	// Timeout bounds each call's wait for an answer, started again by each
	// progress report [DefaultCallTimeout].
	Timeout time.Duration
	// ConnectTimeout bounds an attempt's initialize and first listing
	// (stretched for a busy stdio child) [Env.InitTimeout].
	ConnectTimeout time.Duration
	// MaxTimeout bounds a call however much progress it reports
	// [DefaultMaxCallTimeout, at least Timeout].
	MaxTimeout time.Duration
	// Allow, when non-empty, lists the only own tool names exposed; Deny
	// lists those never exposed.
	Allow []string
	Deny  []string
	// TrustAnnotations shows the upstream's behaviour hints as sent rather
	// than their conservative reading; built-in upstreams are trusted.
	TrustAnnotations bool
	// ReadOnlyTools names own tools the configuration vouches for as
	// read-only, whatever the upstream claims.
	ReadOnlyTools []string
	// MaxMessageBytes bounds one message: a stdio line, an HTTP reply, a
	// line or event of an event stream [DefaultMaxMessageBytes].
	MaxMessageBytes   int
	MaxErrorBodyBytes int // [DefaultMaxErrorBodyBytes]
	// MaxListingBytes and MaxListingItems bound one listing across its
	// pages [DefaultMaxListingBytes, DefaultMaxListingItems].
	MaxListingBytes int
	MaxListingItems int
	// Protocol is the version to pin [DefaultProtocolVersion]; "modern"
	// lets the client negotiate.
	Protocol string
	Results  integrity.ResultPolicy // secrets and injection markers in results [ResultsRedact]
	// ValidateArguments refuses a call whose arguments violate the tool's
	// inputSchema before it reaches the upstream (BI-07).
	ValidateArguments bool
}

// DefaultMaxMessageBytes bounds one message from an upstream.
const DefaultMaxMessageBytes = 16 << 20

func (u Config) maxErrorBodyBytes() int {
	return cmp.Or(max(u.MaxErrorBodyBytes, 0), DefaultMaxErrorBodyBytes)
}

func (u Config) maxMessageBytes() int {
	return cmp.Or(max(u.MaxMessageBytes, 0), DefaultMaxMessageBytes)
}

// DefaultCallTimeout applies when Config.Timeout is zero.
const DefaultCallTimeout = 60 * time.Second

// EffectiveCallTimeout is Timeout, or its default.
func (u Config) EffectiveCallTimeout() time.Duration {
	return cmp.Or(max(u.Timeout, 0), DefaultCallTimeout)
}

// DefaultMaxCallTimeout applies when Config.MaxTimeout is zero.
const DefaultMaxCallTimeout = 10 * time.Minute

// EffectiveMaxTimeout is MaxTimeout, or its default, and never shorter
// than the call timeout.
func (u Config) EffectiveMaxTimeout() time.Duration {
	return max(cmp.Or(max(u.MaxTimeout, 0), DefaultMaxCallTimeout), u.EffectiveCallTimeout())
}

// EffectiveDomain is Domain, or Name.
func (u Config) EffectiveDomain() string { return cmp.Or(u.Domain, u.Name) }

// protocolVersion is the version to pin: "" lets the client negotiate.
func (u Config) protocolVersion() string {
	switch u.Protocol {
	case "":
		return DefaultProtocolVersion
	case "modern":
		return ""
	}
	return u.Protocol
}

// remote reports whether the upstream is reached over HTTP.
func (u Config) remote() bool {
	return u.Transport == TransportStreamableHTTP || u.Transport == TransportSSE
}

// String describes where the upstream lives, without secrets.
func (u Config) String() string {
	switch u.Transport {
	case TransportStdio:
		return fmt.Sprintf("%s (stdio: %s)", u.Name, u.Command)
	case TransportBuiltin:
		return fmt.Sprintf("%s (builtin: %s)", u.Name, u.Builtin)
	default:
		return fmt.Sprintf("%s (%s)", u.Name, u.Transport)
	}
}

// AnnotationTrust is what the configuration lets the gateway believe of
// this upstream's tool annotations (SEC-12).
func (u Config) AnnotationTrust() integrity.AnnotationTrust {
	return integrity.AnnotationTrust{
		All:      u.TrustAnnotations || u.Transport == TransportBuiltin,
		ReadOnly: u.ReadOnlyTools,
	}
}

// host is an HTTP upstream's host and port, without the rest of its URL.
func (c Config) host() string {
	u, err := url.Parse(c.URL)
	if err != nil || u.Host == "" {
		return "the upstream's URL"
	}
	return u.Host
}

// Env is what an upstream needs from the hub that owns it. The hub fills
// it with its options' defaults applied: these fields have none of their
// own (a zero MaxInFlight would admit no call).
type Env struct {
	Logger  *slog.Logger // never nil; the upstream adds its name and scrubs its secrets
	Metrics Metrics      // nil counts nothing
	Builtin BuiltinFunc  // nil in a build without built-in servers
	Version string       // reported to the upstream as the client's version

	InitTimeout            time.Duration // bounds connect, initialize and listing
	BackoffMin, BackoffMax time.Duration // bound the delay between attempts
	RefreshDebounce        time.Duration // coalesces bursts of list_changed
	ReconnectWait          time.Duration // how long a call waits for a restarting upstream
	// MaxInFlight calls run at once, and MaxQueue more may wait.
	MaxInFlight, MaxQueue int
	Notifications         NotificationLimit

	Progress *ProgressRouter
	Relay    func() Relay // nil while there is none
	// Vet checks listed tools against their pins and scans them for
	// poisoning: it returns the tools to expose and why each other one is
	// blocked. Problems with the pins go to logger, findings to findings.
	Vet func(cfg Config, logger, findings *slog.Logger, tools []mcp.Tool) (kept []mcp.Tool, blocked map[string]string)
	// Poisoning is what is done with a listed resource, template or
	// prompt that looks poisoned, as with a tool (Vet); they have no pins.
	Poisoning integrity.Policy
	// Listed hears that u has a new listing; first for its first attempt's.
	Listed func(u *Upstream, first bool)
}

// Metrics counts an upstream's state, restarts and dropped notifications.
type Metrics interface {
	UpstreamState(upstream, state string)
	UpstreamRestart(upstream string)
	NotificationDropped(upstream, kind string)
}

// noMetrics counts nothing.
type noMetrics struct{}

func (noMetrics) UpstreamState(string, string)       {}
func (noMetrics) UpstreamRestart(string)             {}
func (noMetrics) NotificationDropped(string, string) {}
