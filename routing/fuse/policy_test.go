package fuse

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// fieldKeys lists the keys of the FieldErrors in a (joined) error.
func fieldKeys(err error) []string {
	var errs []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	} else if err != nil {
		errs = []error{err}
	}
	var keys []string
	for _, e := range errs {
		var fe *FieldError
		if !errors.As(e, &fe) {
			return append(keys, "not a FieldError: "+e.Error())
		}
		keys = append(keys, fe.Key)
	}
	return keys
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		mod  func(*Policy)
		want []string
	}{
		{"default is valid", nil, nil},
		{"max_tools zero", func(p *Policy) { p.MaxTools = 0 }, []string{"max_tools"}},
		{"min_qr_score NaN", func(p *Policy) { p.MinQRScore = math.NaN() }, []string{"min_qr_score"}},
		{"min_qr_score infinite", func(p *Policy) { p.MinQRScore = math.Inf(-1) }, []string{"min_qr_score"}},
		{"negative min_qr_score is allowed", func(p *Policy) { p.MinQRScore = -0.5 }, nil},
		{"order_policy empty", func(p *Policy) { p.Order = "" }, []string{"order_policy"}},
		{"order_policy unknown", func(p *Policy) { p.Order = "random" }, []string{"order_policy"}},
		{"simple_max_primary zero", func(p *Policy) { p.SimpleMaxPrimary = 0 }, []string{"simple_max_primary"}},
		{"complex_min_primary negative", func(p *Policy) { p.ComplexMinPrimary = -1 }, []string{"complex_min_primary"}},
		{"complex_min_primary above max_tools is bounded, not an error", func(p *Policy) { p.ComplexMinPrimary = 50 }, nil},
		{"blank allowed capability", func(p *Policy) { p.AllowedCapabilities = []string{dir, " "} }, []string{"allowed_capabilities[1]"}},
		{"blank internal tool", func(p *Policy) { p.InternalTools = []string{" "} }, []string{"internal_tools[0]"}},
		{
			"every problem at once",
			func(p *Policy) { *p = Policy{} },
			[]string{"max_tools", "order_policy", "simple_max_primary"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := policy(tt.mod).Validate()
			if diff := cmp.Diff(tt.want, fieldKeys(err)); diff != "" {
				t.Errorf("Validate() = %v; keys mismatch (-want +got):\n%s", err, diff)
			}
		})
	}
}

func TestValidateMessageNamesKeyAndValue(t *testing.T) {
	err := policy(func(p *Policy) { p.MaxTools = -2 }).Validate()
	if got, want := err.Error(), "max_tools: must be at least 1, got -2"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestPolicyFromMap(t *testing.T) {
	tests := []struct {
		name string
		in   map[string]any
		want Policy
	}{
		{"nil map gives the defaults", nil, DefaultPolicy()},
		{
			name: "every key as YAML decodes it",
			in: map[string]any{
				"max_tools": 3, "require_user_facing": false, "min_qr_score": 0.3,
				"adopt_qr_when_needs_empty": false, "order_policy": "merge_by_score",
				"prefer_exact_needs": false, "collapse_duplicates": false,
				"simple_max_primary": 2, "complex_min_primary": 0,
				"allowed_capabilities": []any{dir, search},
			},
			want: Policy{MaxTools: 3, MinQRScore: 0.3, Order: MergeByScore, SimpleMaxPrimary: 2,
				AllowedCapabilities: []string{dir, search}},
		},
		{
			name: "strings from environment overrides",
			in: map[string]any{"max_tools": "5", "min_qr_score": "0.4", "collapse_duplicates": "false",
				"order_policy": "QR_FIRST", "allowed_capabilities": []string{dir}},
			want: policy(func(p *Policy) {
				p.MaxTools, p.MinQRScore, p.CollapseDuplicates, p.Order = 5, 0.4, false, QRFirst
				p.AllowedCapabilities = []string{dir}
			}),
		},
		{
			name: "integral floats and integer scores",
			in:   map[string]any{"max_tools": 4.0, "min_qr_score": 1, "allowed_capabilities": nil},
			want: policy(func(p *Policy) { p.MaxTools, p.MinQRScore = 4, 1 }),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := PolicyFromMap(tt.in)
			if err != nil {
				t.Fatalf("PolicyFromMap() error: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("PolicyFromMap() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPolicyFromMapErrors(t *testing.T) {
	tests := []struct {
		name    string
		in      map[string]any
		want    []string
		message string // a fragment of the error
	}{
		{"unknown key", map[string]any{"max_tool": 3}, []string{"max_tool"}, "max_tool: unknown key"},
		{"keys reported in order", map[string]any{"max_tools": "lots", "bogus": 1},
			[]string{"bogus", "max_tools"}, `max_tools: got "lots", want an integer`},
		{"fractional integer", map[string]any{"simple_max_primary": 1.5},
			[]string{"simple_max_primary"}, "got 1.5, want an integer"},
		{"wrong type", map[string]any{"prefer_exact_needs": 1},
			[]string{"prefer_exact_needs"}, "got int (1), want true or false"},
		{"order not a string", map[string]any{"order_policy": 1},
			[]string{"order_policy"}, "want string"},
		{"non-string capability", map[string]any{"allowed_capabilities": []any{dir, 7}},
			[]string{"allowed_capabilities"}, "[1]: got int (7), want string"},
		{"capabilities not a list", map[string]any{"allowed_capabilities": dir},
			[]string{"allowed_capabilities"}, "want list of tool names"},
		{"internal tools not a list", map[string]any{"internal_tools": dir},
			[]string{"internal_tools"}, "want list of tool names"},
		{"invalid value is validated", map[string]any{"max_tools": 0},
			[]string{"max_tools"}, "must be at least 1"},
		{"unknown order is validated", map[string]any{"order_policy": "random"},
			[]string{"order_policy"}, `got "random"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := PolicyFromMap(tt.in)
			if diff := cmp.Diff(tt.want, fieldKeys(err)); diff != "" {
				t.Errorf("PolicyFromMap() = %v; keys mismatch (-want +got):\n%s", err, diff)
			}
			if err != nil && !strings.Contains(err.Error(), tt.message) {
				t.Errorf("error %q does not contain %q", err, tt.message)
			}
			if diff := cmp.Diff(Policy{}, got); diff != "" {
				t.Errorf("PolicyFromMap() returned a policy with its error:\n%s", diff)
			}
		})
	}
}

func TestPolicyFromMapUnknownKeyIsErrUnknownKey(t *testing.T) {
	_, err := PolicyFromMap(map[string]any{"maxTools": 3})
	if !errors.Is(err, ErrUnknownKey) {
		t.Errorf("got %v, want ErrUnknownKey", err)
	}
}

func TestPolicyAdmits(t *testing.T) {
	p := DefaultPolicy()
	p.AllowedCapabilities = []string{"a", " b "}
	p.InternalTools = []string{"b"}
	uf := p.UserFacing()
	for _, tc := range []struct {
		tool    string
		require bool
		want    bool
	}{{"a", true, true}, {"b", true, false}, {"b", false, true}, {"c", false, false}} {
		p.RequireUserFacing = tc.require
		if got := p.Admits(tc.tool, uf); got != tc.want {
			t.Errorf("Admits(%q) with require_user_facing %v: got %v, want %v", tc.tool, tc.require, got, tc.want)
		}
	}
	if DefaultPolicy().UserFacing() != nil {
		t.Error("UserFacing without internal tools: got a filter, want nil")
	}
}
