package metatools

import (
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-router/mcp-router/internal/defaults"
)

// InputLimits bound the text the model hands the gateway's own tools.
// Zero values take the defaults in brackets.
type InputLimits struct {
	// MaxQueryBytes bounds a query, also tools/list's mcp-router/query [8 KiB].
	MaxQueryBytes int
	// MaxNoteBytes bounds the note of routing_feedback [2 KiB].
	MaxNoteBytes int
	// MaxContextBytes bounds the context of plan [64 KiB].
	MaxContextBytes int
}

// Defaults of InputLimits.
const (
	DefaultMaxQueryBytes   = 8 << 10
	DefaultMaxNoteBytes    = 2 << 10
	DefaultMaxContextBytes = 64 << 10
)

// WithDefaults is l with its zero values set to the defaults.
func (l InputLimits) WithDefaults() InputLimits {
	l.defaults()
	return l
}

func (l *InputLimits) defaults() {
	defaults.Set(&l.MaxQueryBytes, DefaultMaxQueryBytes)
	defaults.Set(&l.MaxNoteBytes, DefaultMaxNoteBytes)
	defaults.Set(&l.MaxContextBytes, DefaultMaxContextBytes)
}

// tooLong is the error result for an argument over max bytes, or nil.
func tooLong(tool, arg, v string, max int) *mcp.CallToolResult {
	if len(v) <= max {
		return nil
	}
	return mcp.NewToolResultError(fmt.Sprintf("%s: %q is %d bytes, more than the limit of %d: shorten it", tool, arg, len(v), max))
}
