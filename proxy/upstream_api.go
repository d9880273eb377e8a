package proxy

// The upstreams are package internal/upstream: one upstream's life, its
// configuration, its transports and their bounds. The names below are the
// part of it that is proxy's API, for the configuration to build and for
// callers to read back; they are the same types and values, not copies.

import (
	"github.com/mcp-router/mcp-router/proxy/internal/upstream"
)

// UpstreamConfig describes one upstream MCP server, already decoded and
// validated by the caller (cmd/mcp-router owns the config file).
type UpstreamConfig = upstream.Config

// The transports an upstream may be reached over.
const (
	TransportStdio          = upstream.TransportStdio
	TransportStreamableHTTP = upstream.TransportStreamableHTTP
	TransportSSE            = upstream.TransportSSE
	TransportBuiltin        = upstream.TransportBuiltin
)

// Defaults of UpstreamConfig.
const (
	DefaultProtocolVersion   = upstream.DefaultProtocolVersion
	DefaultMaxMessageBytes   = upstream.DefaultMaxMessageBytes
	DefaultCallTimeout       = upstream.DefaultCallTimeout
	DefaultMaxCallTimeout    = upstream.DefaultMaxCallTimeout
	DefaultMaxErrorBodyBytes = upstream.DefaultMaxErrorBodyBytes
	DefaultMaxListingBytes   = upstream.DefaultMaxListingBytes
	DefaultMaxListingItems   = upstream.DefaultMaxListingItems
)

// State is an upstream's connection state.
type State = upstream.State

// The states an upstream moves through.
const (
	StateConnecting = upstream.StateConnecting
	StateConnected  = upstream.StateConnected
	StateFailed     = upstream.StateFailed
	StateStopped    = upstream.StateStopped
)

// Status is a snapshot of one upstream for display.
type Status = upstream.Status

// BuiltinFunc builds a built-in server by name with its flags.
type BuiltinFunc = upstream.BuiltinFunc

// NotificationLimit bounds the notifications each upstream may send.
type NotificationLimit = upstream.NotificationLimit

// Defaults of NotificationLimit.
const (
	DefaultNotificationsPerSecond = upstream.DefaultNotificationsPerSecond
	DefaultNotificationBurst      = upstream.DefaultNotificationBurst
)

// Progress is one progress report from an upstream, for the caller's own
// progress token.
type Progress = upstream.Progress

// ProgressFunc receives progress for one call. It must not block.
type ProgressFunc = upstream.ProgressFunc

// Relay is where what an upstream asks of, or tells, a client goes. The
// Server implements it and sets it with [Hub.SetRelay]; the hub hands it
// on to each upstream.
type Relay = upstream.Relay

// Errors of the upstreams, for errors.Is.
var (
	ErrUnauthorized        = upstream.ErrUnauthorized
	ErrNoAnswer            = upstream.ErrNoAnswer
	ErrNoCaller            = upstream.ErrNoCaller
	ErrAmbiguousCaller     = upstream.ErrAmbiguousCaller
	ErrListingTooLarge     = upstream.ErrListingTooLarge
	ErrCrossOriginRedirect = upstream.ErrCrossOriginRedirect
)

// StartWatchdog starts the watchdog that kills this gateway's stdio
// children and their descendants if the gateway is killed (SIGKILL): the
// executable at exe (the gateway's own, whose main calls
// MaybeRunWatchdog first), in a session of its own. stop, at a normal
// shutdown after the hub is closed, ends it. It does nothing but on Linux.
func StartWatchdog(exe string) (stop func(), err error) { return upstream.StartWatchdog(exe) }

// MaybeRunWatchdog runs the watchdog and exits when this process was
// started as one (by StartWatchdog); otherwise it returns at once. Call
// it first in main.
func MaybeRunWatchdog() { upstream.MaybeRunWatchdog() }
