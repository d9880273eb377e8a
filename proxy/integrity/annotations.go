package integrity

import "github.com/mark3labs/mcp-go/mcp"

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
