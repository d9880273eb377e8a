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

func TestAnnotationTrust(t *testing.T) {
	yes, no := mcp.ToBoolPtr(true), mcp.ToBoolPtr(false)
	claims := mcp.ToolAnnotation{Title: "List", ReadOnlyHint: yes, DestructiveHint: no, IdempotentHint: yes, OpenWorldHint: no}
	conservative := mcp.ToolAnnotation{Title: "List", ReadOnlyHint: no, DestructiveHint: yes, IdempotentHint: no, OpenWorldHint: yes}
	tests := []struct {
		name  string
		trust AnnotationTrust
		tool  string
		want  mcp.ToolAnnotation
	}{
		{"untrusted", AnnotationTrust{}, "list", conservative},
		{"trusted", AnnotationTrust{All: true}, "list", claims},
		{"vouched read-only", AnnotationTrust{ReadOnly: []string{"list"}}, "list",
			mcp.ToolAnnotation{Title: "List", ReadOnlyHint: yes, DestructiveHint: no, IdempotentHint: yes, OpenWorldHint: yes}},
		{"another tool vouched", AnnotationTrust{ReadOnly: []string{"get"}}, "list", conservative},
		{"vouched and trusted", AnnotationTrust{All: true, ReadOnly: []string{"list"}}, "list", claims},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.trust.Annotations(mcp.Tool{Name: tt.tool, Annotations: claims})
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	// A vouched tool is read-only even when the upstream says otherwise.
	got := AnnotationTrust{All: true, ReadOnly: []string{"wipe"}}.Annotations(mcp.Tool{Name: "wipe", Annotations: conservative})
	if !*got.ReadOnlyHint || *got.DestructiveHint || !*got.IdempotentHint || !*got.OpenWorldHint {
		t.Errorf("vouched read-only over a destructive claim: %+v", got)
	}
}
