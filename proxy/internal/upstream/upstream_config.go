package upstream

import (
	"cmp"
	"fmt"
	"net/url"
	"time"

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

// Config describes one upstream MCP server, already decoded and
// validated by the caller (cmd/mcp-router owns the config file).
type Config struct {
	// Name is the upstream's key in the profile.
	Name string
	// Transport is one of the Transport* constants.
	Transport string

	// Command, Args, Env and Cwd start a stdio child. Env is added to a
	// minimal environment (PATH, HOME and friends), keys keep their case.
	Command string
	Args    []string
	Env     map[string]string
	Cwd     string
	// InheritEnv gives the child the proxy's whole environment (opt-in;
	// by default it gets a minimal one, so secrets stay out).
	InheritEnv bool

	// URL and Headers reach a streamable-HTTP or SSE server.
	URL     string
	Headers map[string]string
	// Auth is the upstream's OAuth settings (nil: none); the caller makes
	// Authorizer from it.
	Auth *upstreamauth.Config
	// Authorizer, when set and Headers has no Authorization, gives each
	// request to the upstream its token (a login's, or one exchanged for
	// the caller's); see package upstreamauth.
	Authorizer *upstreamauth.Authorizer

	// Builtin names a built-in server run in-process; Args are its flags.
	Builtin string

	// Prefix is prepended to every tool and prompt name of this upstream.
	// The caller resolves the default ("<name>_"); empty means none.
	Prefix string
	// Domain is the upstream's topical domain for routing; defaults to Name.
	Domain string
	// Description says what the upstream is for ("my personal notes
	// folder"); empty means none. Routing indexes it with each of the
	// upstream's tools and the model is shown it beside them, which tells
	// several instances of one server apart.
	Description string
	// DefaultPrefix marks Prefix as the default "<name>_" rather than one
	// the configuration set: when every tool of the upstream already
	// starts with it, it is not added again (slack_post_message, not
	// slack_slack_post_message).
	DefaultPrefix bool
	// Timeout bounds each call's wait for an answer; a progress report
	// from the upstream for the call starts it again (an idle timeout).
	// Zero means 60s.
	Timeout time.Duration
	// ConnectTimeout bounds a connection attempt's initialize and first
	// listing; a stdio child that shows signs of life is given up to
	// connectStretch times as long (see withConnectLimit). Zero means
	// Env.InitTimeout.
	ConnectTimeout time.Duration
	// MaxTimeout bounds each call however much progress it reports; zero
	// means DefaultMaxCallTimeout, or Timeout if that is longer.
	MaxTimeout time.Duration
	// Allow, when non-empty, lists the only upstream tool names exposed;
	// Deny lists names never exposed. Both name the upstream's own tool names.
	Allow []string
	Deny  []string
	// TrustAnnotations shows clients the upstream's behaviour hints
	// (readOnlyHint, destructiveHint, idempotentHint, openWorldHint) as it
	// sends them. Otherwise they are replaced by the conservative reading
	// (integrity.TrustedAnnotations); built-in upstreams are always trusted.
	TrustAnnotations bool
	// ReadOnlyTools names upstream tools (own names) that the configuration
	// vouches for as read-only: shown as read-only, not destructive and
	// idempotent whatever the upstream claims.
	ReadOnlyTools []string
	// MaxMessageBytes bounds one message from an upstream: a stdio line,
	// an HTTP reply, one line or event of an event stream; zero means
	// DefaultMaxMessageBytes.
	MaxMessageBytes int
	// MaxErrorBodyBytes bounds the body of an HTTP error reply; zero
	// means DefaultMaxErrorBodyBytes.
	MaxErrorBodyBytes int
	// MaxListingBytes and MaxListingItems bound one listing (tools,
	// resources, resource templates or prompts) across all its pages;
	// zero means DefaultMaxListingBytes and DefaultMaxListingItems.
	MaxListingBytes int
	MaxListingItems int
	// Protocol is the protocol version to pin; empty means
	// DefaultProtocolVersion, "modern" lets the client negotiate freely.
	Protocol string
	// Results says what to do with secrets and injection markers in this
	// upstream's tool results (integrity.ResultsOff, ResultsWarn,
	// ResultsRedact, ResultsBlock); empty means ResultsRedact.
	Results integrity.ResultPolicy
	// ValidateArguments checks each call's arguments against the tool's
	// inputSchema before forwarding; a call that violates it is refused
	// with KindInvalidArguments and never reaches the upstream (BI-07).
	// Off by default: arguments pass through unchanged and the upstream,
	// whose schema may be looser or stricter than what it accepts, judges.
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

// String describes where the upstream lives without secrets (no env values,
// no headers, no URL query).
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

// annotationTrust is what the configuration lets the gateway believe of
// this upstream's tool annotations (SEC-12).
func (u Config) AnnotationTrust() integrity.AnnotationTrust {
	return integrity.AnnotationTrust{
		All:      u.TrustAnnotations || u.Transport == TransportBuiltin,
		ReadOnly: u.ReadOnlyTools,
	}
}

// host is an HTTP upstream's host and port, without the rest of its URL,
// which may carry a key in its path or query.
func (c Config) host() string {
	u, err := url.Parse(c.URL)
	if err != nil || u.Host == "" {
		return "the upstream's URL"
	}
	return u.Host
}
