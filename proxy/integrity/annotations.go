package integrity

import (
	"slices"

	"github.com/mark3labs/mcp-go/mcp"
)

// TrustedAnnotations is what the gateway may believe of t's annotations:
// the title, and every behaviour hint at its conservative value whatever
// the upstream claims — not read-only, destructive, not idempotent, open
// world. An upstream that says readOnlyHint or idempotentHint is never a
// reason to retry a call or skip a confirmation (an untrusted server would
// say exactly that to get its calls through); only the router's own
// configuration marks a tool safe or idempotent.
func TrustedAnnotations(t mcp.Tool) mcp.ToolAnnotation {
	return mcp.ToolAnnotation{
		Title:           t.Annotations.Title,
		ReadOnlyHint:    mcp.ToBoolPtr(false),
		DestructiveHint: mcp.ToBoolPtr(true),
		IdempotentHint:  mcp.ToBoolPtr(false),
		OpenWorldHint:   mcp.ToBoolPtr(true),
	}
}

// AnnotationTrust is what the router's configuration lets it believe of
// one upstream's tool annotations.
type AnnotationTrust struct {
	// All believes every hint the upstream sends (trust_annotations; the
	// built-in servers are always trusted).
	All bool
	// ReadOnly are upstream tool names (their own, unprefixed) that the
	// configuration vouches for as read-only (read_only_tools).
	ReadOnly []string
}

// Annotations are t's annotations as the gateway shows and uses them. A
// tool in ReadOnly is read-only, not destructive and idempotent, whatever
// the upstream says; otherwise, with All the upstream's annotations are
// kept as sent, and without it only their title is ([TrustedAnnotations]).
// For a tool in ReadOnly the open-world hint follows All the same way.
func (a AnnotationTrust) Annotations(t mcp.Tool) mcp.ToolAnnotation {
	out := TrustedAnnotations(t)
	if a.All {
		out = t.Annotations
	}
	if slices.Contains(a.ReadOnly, t.Name) {
		out.ReadOnlyHint = mcp.ToBoolPtr(true)
		out.DestructiveHint = mcp.ToBoolPtr(false)
		out.IdempotentHint = mcp.ToBoolPtr(true)
	}
	return out
}
