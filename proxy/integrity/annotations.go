package integrity

import (
	"slices"

	"github.com/mark3labs/mcp-go/mcp"
)

// TrustedAnnotations is what the gateway may believe of t's annotations:
// the title, and every hint at its conservative value (not read-only,
// destructive, not idempotent, open world), whatever the upstream claims.
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

// Annotations are t's annotations as the gateway shows and uses them: the
// upstream's with All, else [TrustedAnnotations]; a tool in ReadOnly is
// then marked read-only, not destructive and idempotent.
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
