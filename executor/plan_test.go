package executor

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDecode(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want *Plan
		errs []string // each must appear in the error
	}{
		{
			name: "full plan",
			in: `{"steps":[{"id":"a","tool":"echo","args":{"value":12345678901234567890}},
				{"id":"b","tool":"echo","args":{"value":"$<<a.value>>"},"depends_on":["a"],"timeout_ms":5}],
				"on_error":"continue","deadline_ms":100,"max_parallel":2,"output":"$<<b>>","dry_run":true}`,
			want: &Plan{
				Steps: []Step{
					{ID: "a", Tool: "echo", Args: map[string]any{"value": json.Number("12345678901234567890")}},
					{ID: "b", Tool: "echo", Args: map[string]any{"value": "$<<a.value>>"}, DependsOn: []string{"a"}, TimeoutMS: 5},
				},
				OnError: "continue", DeadlineMS: 100, MaxParallel: 2, Output: "$<<b>>", DryRun: true,
			},
		},
		{name: "empty plan", in: `{"steps":[]}`, want: &Plan{Steps: []Step{}}},
		{
			name: "a step's purpose is read",
			in:   `{"steps":[{"id":"a","tool":"echo","purpose":"Look the customer up."}]}`,
			want: &Plan{Steps: []Step{{ID: "a", Tool: "echo", Purpose: "Look the customer up."}}},
		},
		{
			name: "every unknown key is named, with where it is",
			in:   `{"steps":[{"id":"a","tool":"t","dependson":["x"]},{"id":"b","tool":"t","Args":{}}],"parallel":3}`,
			errs: []string{`plan: unknown key "parallel"`, `steps[0]: unknown key "dependson"`, `steps[1]: unknown key "Args"`},
		},
		{name: "wrong type", in: `{"steps":[{"id":"a","tool":"t","timeout_ms":"5"}]}`, errs: []string{"decoding plan", "timeout_ms"}},
		{name: "trailing data", in: `{"steps":[]} {"steps":[]}`, errs: []string{"data after the plan"}},
		{name: "not JSON", in: `steps: []`, errs: []string{"decoding plan"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Decode([]byte(tt.in))
			if len(tt.errs) > 0 {
				if err == nil {
					t.Fatalf("got no error, want %q", tt.errs)
				}
				for _, e := range tt.errs {
					if !strings.Contains(err.Error(), e) {
						t.Errorf("got error %q, want it to contain %q", err, e)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("plan (-want +got):\n%s", diff)
			}
		})
	}
}

// FuzzDecode checks that the decoder never panics, and that what it accepts
// validates without panicking either.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		`{"steps":[{"id":"a","tool":"echo","args":{"value":"$<<b.x>>"}},{"id":"b","tool":"search"}]}`,
		`{"steps":[{"id":"a","tool":"echo","foreach":"$<<a>>","args":{"value":{"$ref":"item","path":"/x"}}}],"output":{"o":"$<<a>>"}}`,
		`{"steps":[{"id":"a","tool":"nope","depends_on":["a","b"],"timeout_ms":-1}],"on_error":"x","max_parallel":-1}`,
		`{"steps":null}`, `null`, `[]`, `{"steps":[{}]}`,
	} {
		f.Add([]byte(s))
	}
	e, _ := newTest(Options{})
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Decode(data)
		if err != nil {
			return
		}
		_, _ = e.Validate(p)
	})
}
