package proxy

import (
	"fmt"
	"time"
)

// Transport kinds an upstream can use.
const (
	TransportStdio          = "stdio"
	TransportStreamableHTTP = "streamable-http"
	TransportSSE            = "sse"
	TransportBuiltin        = "builtin"
)

// DefaultProtocolVersion is the MCP protocol version upstream clients pin by
// default (DESIGN decision 3).
const DefaultProtocolVersion = "2025-11-25"

// UpstreamConfig describes one upstream MCP server, already decoded and
// validated by the caller (cmd/mcp-router owns the config file).
type UpstreamConfig struct {
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

	// Builtin names a built-in server run in-process; Args are its flags.
	Builtin string

	// Prefix is prepended to every tool and prompt name of this upstream.
	// The caller resolves the default ("<name>_"); empty means none.
	Prefix string
	// Domain is the upstream's topical domain for routing; defaults to Name.
	Domain string
	// Timeout bounds each call; zero means 60s.
	Timeout time.Duration
	// Allow, when non-empty, lists the only upstream tool names exposed;
	// Deny lists names never exposed. Both name the upstream's own tool names.
	Allow []string
	Deny  []string
	// MaxMessageBytes bounds one message from a stdio upstream; zero
	// means DefaultMaxMessageBytes.
	MaxMessageBytes int
	// Protocol is the protocol version to pin; empty means
	// DefaultProtocolVersion, "modern" lets the client negotiate freely.
	Protocol string
}

// DefaultMaxMessageBytes bounds one message from a stdio upstream.
const DefaultMaxMessageBytes = 16 << 20

func (u UpstreamConfig) maxMessageBytes() int {
	if u.MaxMessageBytes > 0 {
		return u.MaxMessageBytes
	}
	return DefaultMaxMessageBytes
}

// DefaultCallTimeout applies when UpstreamConfig.Timeout is zero.
const DefaultCallTimeout = 60 * time.Second

func (u UpstreamConfig) callTimeout() time.Duration {
	if u.Timeout > 0 {
		return u.Timeout
	}
	return DefaultCallTimeout
}

func (u UpstreamConfig) domain() string {
	if u.Domain != "" {
		return u.Domain
	}
	return u.Name
}

// String describes where the upstream lives without secrets (no env values,
// no headers, no URL query).
func (u UpstreamConfig) String() string {
	switch u.Transport {
	case TransportStdio:
		return fmt.Sprintf("%s (stdio: %s)", u.Name, u.Command)
	case TransportBuiltin:
		return fmt.Sprintf("%s (builtin: %s)", u.Name, u.Builtin)
	default:
		return fmt.Sprintf("%s (%s)", u.Name, u.Transport)
	}
}
