package builtin

import (
	"encoding/json"
	"math"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCalculatorToolsDescribeThemselves(t *testing.T) {
	c := start(t, "calculator")
	tools := listTools(t, c)
	if len(tools) != 17 {
		t.Fatalf("got %d tools, want 17", len(tools))
	}
	wantSchema := map[string]any{
		"type":       "object",
		"properties": map[string]any{"result": map[string]any{"type": "number"}},
		"required":   []any{"result"},
	}
	for _, tool := range tools {
		b, err := json.Marshal(tool.OutputSchema)
		if err != nil {
			t.Fatalf("%s: marshalling output schema: %v", tool.Name, err)
		}
		var schema map[string]any
		if err := json.Unmarshal(b, &schema); err != nil {
			t.Fatalf("%s: output schema %s: %v", tool.Name, b, err)
		}
		if diff := cmp.Diff(wantSchema, schema); diff != "" {
			t.Errorf("%s: output schema mismatch (-want +got):\n%s", tool.Name, diff)
		}
		if len(tool.Description) < 20 {
			t.Errorf("%s: description %q is too short to route by", tool.Name, tool.Description)
		}
		a := tool.Annotations
		if a.ReadOnlyHint == nil || !*a.ReadOnlyHint || a.IdempotentHint == nil || !*a.IdempotentHint {
			t.Errorf("%s: annotations %+v, want readOnlyHint and idempotentHint true", tool.Name, a)
		}
		if len(tool.InputSchema.Required) == 0 {
			t.Errorf("%s: no required parameters", tool.Name)
		}
	}
}

func TestCalculatorResults(t *testing.T) {
	c := start(t, "calculator")
	tests := []struct {
		name string
		tool string
		args map[string]any
		want float64
	}{
		{"add", "add", map[string]any{"a": 2, "b": 3}, 5},
		{"add decimals", "add", map[string]any{"a": 0.5, "b": 0.25}, 0.75},
		{"subtract", "subtract", map[string]any{"a": 2, "b": 5}, -3},
		{"multiply", "multiply", map[string]any{"a": -4, "b": 2.5}, -10},
		{"multiply by zero is not negative zero", "multiply", map[string]any{"a": -4, "b": 0}, 0},
		{"divide", "divide", map[string]any{"a": 7, "b": 2}, 3.5},
		{"modulo", "modulo", map[string]any{"a": 7, "b": 3}, 1},
		{"modulo takes the sign of b", "modulo", map[string]any{"a": -7, "b": 3}, 2},
		{"modulo negative divisor", "modulo", map[string]any{"a": 7, "b": -3}, -2},
		{"modulo fractional", "modulo", map[string]any{"a": 5.5, "b": 2}, 1.5},
		{"power", "power", map[string]any{"base": 2, "exponent": 10}, 1024},
		{"power fractional exponent is a root", "power", map[string]any{"base": 9, "exponent": 0.5}, 3},
		{"power negative exponent", "power", map[string]any{"base": 2, "exponent": -2}, 0.25},
		{"sqrt", "sqrt", map[string]any{"x": 16}, 4},
		{"square", "square", map[string]any{"x": -3}, 9},
		{"cube", "cube", map[string]any{"x": -3}, -27},
		{"sin", "sin", map[string]any{"x": math.Pi / 2}, 1},
		{"cos", "cos", map[string]any{"x": 0}, 1},
		{"tan", "tan", map[string]any{"x": 0}, 0},
		{"log defaults to base 10", "log", map[string]any{"x": 1000}, 3},
		{"log base 2", "log", map[string]any{"x": 8, "base": 2}, 3},
		{"log base 3 is exact", "log", map[string]any{"x": 27, "base": 3}, 3},
		{"log of a fraction", "log", map[string]any{"x": 0.01}, -2},
		{"ln", "ln", map[string]any{"x": math.E}, 1},
		{"exp", "exp", map[string]any{"x": 0}, 1},
		{"absolute", "absolute", map[string]any{"x": -2.5}, 2.5},
		{"factorial", "factorial", map[string]any{"n": 5}, 120},
		{"factorial of zero", "factorial", map[string]any{"n": 0}, 1},
		{"factorial of 170 fits", "factorial", map[string]any{"n": 170}, 7.257415615307994e306},
		{"floating-point noise is rounded away", "add", map[string]any{"a": 0.1, "b": 0.2}, 0.3},
		{"whole numbers stay exact", "add", map[string]any{"a": 9007199254740991, "b": 0}, 9007199254740991},
		{"numeric strings are accepted", "add", map[string]any{"a": "2", "b": " 3.5 "}, 5.5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := call(t, c, tt.tool, tt.args)
			got := structured[struct {
				Result *float64 `json:"result"`
			}](t, res)
			if got.Result == nil {
				t.Fatalf("structured content has no result: %v", res.StructuredContent)
			}
			if *got.Result != tt.want {
				t.Errorf("%s(%v): got %v, want %v", tt.tool, tt.args, *got.Result, tt.want)
			}
			if want := strconv.FormatFloat(*got.Result, 'g', -1, 64); text(res) != want {
				t.Errorf("%s(%v) text: got %q, want %q", tt.tool, tt.args, text(res), want)
			}
		})
	}
}

func TestCalculatorErrors(t *testing.T) {
	c := start(t, "calculator")
	tests := []struct {
		name  string
		tool  string
		args  map[string]any
		wants []string // substrings of the error text
	}{
		{"divide by zero", "divide", map[string]any{"a": 1, "b": 0}, []string{"divide:", "zero"}},
		{"modulo by zero", "modulo", map[string]any{"a": 1, "b": 0}, []string{"modulo:", "zero"}},
		{"sqrt of a negative", "sqrt", map[string]any{"x": -4}, []string{"sqrt:", "negative"}},
		{"ln of zero", "ln", map[string]any{"x": 0}, []string{"ln:", "greater than 0"}},
		{"log of a negative", "log", map[string]any{"x": -1}, []string{"log:", "x must be greater than 0"}},
		{"log base 1", "log", map[string]any{"x": 5, "base": 1}, []string{"log:", "base", "not 1"}},
		{"log base 0", "log", map[string]any{"x": 5, "base": 0}, []string{"log:", "base"}},
		{"log negative base", "log", map[string]any{"x": 5, "base": -2}, []string{"log:", "base"}},
		{"factorial of a fraction", "factorial", map[string]any{"n": 2.5}, []string{"factorial:", "whole number"}},
		{"factorial of a negative", "factorial", map[string]any{"n": -1}, []string{"factorial:", "negative"}},
		{"factorial over 170", "factorial", map[string]any{"n": 171}, []string{"factorial:", "170"}},
		{"power overflows", "power", map[string]any{"base": 10, "exponent": 400}, []string{"power:", "infinite"}},
		{"power of zero to a negative", "power", map[string]any{"base": 0, "exponent": -1}, []string{"power:", "infinite"}},
		{"power without a real result", "power", map[string]any{"base": -8, "exponent": 0.5}, []string{"power:", "not a real number"}},
		{"exp overflows", "exp", map[string]any{"x": 1000}, []string{"exp:", "infinite"}},
		{"multiply overflows", "multiply", map[string]any{"a": 1e300, "b": 1e300}, []string{"multiply:", "infinite"}},
		{"missing parameter", "add", map[string]any{"a": 1}, []string{"add:", `"b"`, "required"}},
		{"no arguments", "sqrt", nil, []string{"sqrt:", `"x"`, "required"}},
		{"non-numeric string", "add", map[string]any{"a": "two", "b": 1}, []string{"add:", `"a"`, "number", `"two"`}},
		{"boolean", "square", map[string]any{"x": true}, []string{"square:", `"x"`, "number", "boolean"}},
		{"object", "cube", map[string]any{"x": map[string]any{}}, []string{"cube:", `"x"`, "object"}},
		{"infinity string", "add", map[string]any{"a": "Inf", "b": 1}, []string{"add:", `"a"`, "finite"}},
		{"optional parameter of the wrong type", "log", map[string]any{"x": 10, "base": "ten"}, []string{"log:", `"base"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := call(t, c, tt.tool, tt.args)
			wantError(t, res, tt.wants...)
			if res.StructuredContent != nil {
				t.Errorf("error result carries structured content %v, want none", res.StructuredContent)
			}
		})
	}
}

func BenchmarkCalculatorAdd(b *testing.B) {
	c := start(b, "calculator")
	args := map[string]any{"a": 2, "b": 3}
	for b.Loop() {
		if res := call(b, c, "add", args); res.IsError {
			b.Fatalf("add: %s", text(res))
		}
	}
}
