package proxy

// The part of package internal/upstream that is proxy's API: the same
// types and values, not copies.

import (
	"errors"
	"fmt"
	"strings"
	"unicode"

	"github.com/mcp-router/mcp-router/internal/clip"
	"github.com/mcp-router/mcp-router/proxy/call"
	"github.com/mcp-router/mcp-router/proxy/internal/upstream"
)

// UpstreamConfig describes one upstream MCP server, decoded and validated
// by the caller.
type UpstreamConfig = upstream.Config

// The transports an upstream may be reached over.
const (
	TransportStdio          = upstream.TransportStdio
	TransportStreamableHTTP = upstream.TransportStreamableHTTP
	TransportSSE            = upstream.TransportSSE
	TransportBuiltin        = upstream.TransportBuiltin
)

// DefaultCallTimeout applies when UpstreamConfig.Timeout is zero.
const DefaultCallTimeout = upstream.DefaultCallTimeout

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

// Progress is one progress report from an upstream.
type Progress = upstream.Progress

// ProgressFunc receives progress for one call. It must not block.
type ProgressFunc = upstream.ProgressFunc

// Relay is where what an upstream asks of, or tells, a client goes; the
// Server implements it.
type Relay = upstream.Relay

// ErrNoAnswer marks an upstream that did not answer initialize in time (errors.Is).
var ErrNoAnswer = upstream.ErrNoAnswer

// StartWatchdog starts the watchdog (the executable at exe) that kills
// this gateway's stdio children and their descendants if the gateway is
// killed; stop ends it at a normal shutdown. It does nothing but on Linux.
func StartWatchdog(exe string) (stop func(), err error) { return upstream.StartWatchdog(exe) }

// MaybeRunWatchdog runs the watchdog and exits when this process was
// started as one; otherwise it returns at once. Call it first in main.
func MaybeRunWatchdog() { upstream.MaybeRunWatchdog() }

// Kind classifies a failed call ([call.Kind]).
type Kind = call.Kind

// ErrUnknownTool is returned for a name that is not in the catalog.
var ErrUnknownTool = errors.New("unknown tool")

// ErrAppOnly is returned for a tool its server marks for its app only.
var ErrAppOnly = errors.New(`its server marks it for its app's interface only (_meta.ui.visibility does not include "model"), ` +
	"so it is not offered to the model and the model cannot call it")

// UpstreamError is a failed call: which stage refused it, or what its
// upstream answered ([call.Error]).
type UpstreamError = call.Error

// MaxErrorSummaryBytes bounds the text of an upstream's failure that
// reaches the model; the whole text goes to the gateway's log.
const MaxErrorSummaryBytes = 512

// summarizeError is msg as the model sees it: control characters and runs
// of white space as one space, invalid bytes as U+FFFD, cut at
// MaxErrorSummaryBytes with a note of its length; it reports whether msg
// was cut.
func summarizeError(msg string) (string, bool) {
	if len(msg) <= MaxErrorSummaryBytes && !strings.ContainsFunc(msg, unicode.IsControl) {
		return msg, false
	}
	one := clip.OneLine(strings.Map(func(r rune) rune { // Map reads an invalid byte as U+FFFD
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, msg))
	if len(one) <= MaxErrorSummaryBytes {
		return one, false
	}
	return fmt.Sprintf("%s… (%d bytes in all; the whole text is in the gateway's log)", clip.Prefix(one, MaxErrorSummaryBytes), len(msg)), true
}
