package executor

import (
	"errors"
	"testing"
)

func TestValidateUnknownToolCarriesTheCatalogsExplanation(t *testing.T) {
	for _, tt := range []struct {
		name    string
		explain func(string) string
		want    string
	}{
		{"with an explanation", func(name string) string { return "; did you mean echo?" },
			`step "b": tool: the catalog has no tool "ecko"; did you mean echo?`},
		{"without Explain", nil, `step "b": tool: the catalog has no tool "ecko"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e, f := newTest(Options{Explain: tt.explain})
			_, err := e.Validate(&Plan{Steps: []Step{
				step("a", "echo", map[string]any{"value": 1}),
				step("b", "ecko", map[string]any{"value": 2}),
			}})
			var ve *ValidationError
			if !errors.As(err, &ve) || len(ve.Problems) != 1 || ve.Problems[0].String() != tt.want {
				t.Fatalf("got %v, want one problem: %s", err, tt.want)
			}
			if n := len(f.received()); n != 0 {
				t.Errorf("%d calls made, want none", n)
			}
		})
	}
}
