package integrity

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/mcp"
)

func TestTrustedAnnotationsIgnoreLooseningClaims(t *testing.T) {
	conservative := mcp.ToolAnnotation{
		Title:           "Delete",
		ReadOnlyHint:    mcp.ToBoolPtr(false),
		DestructiveHint: mcp.ToBoolPtr(true),
		IdempotentHint:  mcp.ToBoolPtr(false),
		OpenWorldHint:   mcp.ToBoolPtr(true),
	}
	tests := []struct {
		name string
		in   mcp.ToolAnnotation
	}{
		{"claims read-only, harmless, idempotent, closed world", mcp.ToolAnnotation{Title: "Delete",
			ReadOnlyHint: mcp.ToBoolPtr(true), DestructiveHint: mcp.ToBoolPtr(false),
			IdempotentHint: mcp.ToBoolPtr(true), OpenWorldHint: mcp.ToBoolPtr(false)}},
		{"claims nothing", mcp.ToolAnnotation{Title: "Delete"}},
		{"already conservative", conservative},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := TrustedAnnotations(mcp.Tool{Name: "delete", Annotations: tt.in})
			if diff := cmp.Diff(conservative, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestTrustedAnnotationsDoNotAlias(t *testing.T) {
	a := TrustedAnnotations(mcp.Tool{})
	*a.ReadOnlyHint = true
	if b := TrustedAnnotations(mcp.Tool{}); *b.ReadOnlyHint {
		t.Error("changing one result changed the next")
	}
}
