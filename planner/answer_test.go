package planner

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestParseAnswer(t *testing.T) {
	step := func(s string) string {
		return `{"decision":"USE_TOOL","confidence":0.9,"reasoning":"r","plan":{"steps":[` + s + `]}}`
	}
	for _, tc := range []struct {
		name, text, wantErr string
	}{
		{"valid plan", parallelAnswer, ""},
		{"fenced", "```json\n" + parallelAnswer + "\n```", ""},
		{"unknown fields ignored", `{"decision":"REASON_ONLY","confidence":1,"reasoning":"r","strategy":"SINGLE"}`, ""},
		{"retrieve", `{"decision":"RETRIEVE","confidence":0,"reasoning":"r"}`, ""},
		{"no-argument step", step(`{"id":"f","tool":"calculator_factorial"}`), ""},
		{"empty", "  \n", "the answer is empty"},
		{"prose", "USE_TOOL with the calculator", "not a JSON object"},
		{"trailing text", parallelAnswer + " I hope this helps", "not a JSON object"},
		{"array", `[` + parallelAnswer + `]`, "not a JSON object"},
		{"unknown decision", `{"decision":"use_tool","confidence":0.9,"reasoning":"r"}`, `decision "use_tool" is not one of USE_TOOL, RETRIEVE, REASON_ONLY, CLARIFY, ESCALATE`},
		{"missing confidence", `{"decision":"REASON_ONLY","reasoning":"r"}`, "confidence is missing"},
		{"confidence as text", `{"decision":"REASON_ONLY","confidence":"0.9","reasoning":"r"}`, "not a JSON object"},
		{"confidence as percent", `{"decision":"REASON_ONLY","confidence":90,"reasoning":"r"}`, "confidence 90 is not between 0 and 1"},
		{"negative confidence", `{"decision":"REASON_ONLY","confidence":-0.1,"reasoning":"r"}`, "not between 0 and 1"},
		{"USE_TOOL without plan", `{"decision":"USE_TOOL","confidence":0.9,"reasoning":"r"}`, "USE_TOOL needs a plan"},
		{"plan as array", `{"decision":"USE_TOOL","confidence":0.9,"reasoning":"r","plan":[]}`, "want an object"},
		{"no steps", step(``), "plan: no steps"},
		{"tool not offered", step(`{"id":"f","tool":"calculator_gamma","args":{}}`), `tool "calculator_gamma" is not one of the listed tools`},
		{"tool not a string", step(`{"id":"f","tool":7,"args":{}}`), "plan: json"},
		{"duplicate id", step(`{"id":"f","tool":"calculator_square","args":{}},{"id":"f","tool":"calculator_square","args":{}}`), `duplicate id "f"`},
		{"id with a dot", step(`{"id":"f.1","tool":"calculator_square","args":{}}`), `"f.1" is not a valid id`},
		{"empty id", step(`{"tool":"calculator_square","args":{}}`), `steps[0].id: missing`},
		{"args not an object", step(`{"id":"f","tool":"calculator_square","args":[4]}`), `cannot unmarshal array into Go struct field Step.steps.args`},
		{"unknown depends_on", step(`{"id":"f","tool":"calculator_square","args":{},"depends_on":["g"]}`), `step "f": depends_on[0]: unknown step "g"`},
		{"the seeds' reference syntax", step(`{"id":"s","tool":"calculator_sin","args":{"x":1}},{"id":"q","tool":"calculator_square","args":{"x":"${{s}}"}}`),
			`step "q": args.x: "${{s}}" is not this gateway's reference syntax: write "$<<s>>"`},
		{"the seeds' syntax deep in args", step(`{"id":"q","tool":"calculator_square","args":{"x":{"list":["a ${{s.result}} b"]}}}`),
			`step "q": args.x.list[0]: "${{s.result}}" is not this gateway's reference syntax: write "$<<s.result>>"`},
		{"escaped and spaced ${{ are text", step(`{"id":"q","tool":"calculator_square","args":{"x":"$${{s}} ${{ github.sha }}"}}`), ""},
		{"cycle", step(`{"id":"a","tool":"calculator_square","args":{"x":"$<<b.result>>"}},{"id":"b","tool":"calculator_square","args":{"x":"$<<a.result>>"}}`), `cycle: a -> b -> a`},
		{"CLARIFY without question", `{"decision":"CLARIFY","confidence":0.3,"reasoning":"r","clarifying_question":" "}`, "CLARIFY needs a clarifying_question"},
		{"ESCALATE without reason", `{"decision":"ESCALATE","confidence":0.3,"reasoning":"r"}`, "ESCALATE needs an escalation_reason"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseAnswer(tc.text, offeredNames(calcTools()), nil)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("got %v, want no error", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("got %v, want an error with %q", err, tc.wantErr)
			}
		})
	}
}

// TestParseAnswerValidate checks that an injected Validate replaces the
// structural checks but not the rule that plans use only offered tools.
func TestParseAnswerValidate(t *testing.T) {
	lenient := func(json.RawMessage) error { return nil }
	strict := func(json.RawMessage) error { return errors.New(`step "1": unknown argument "y"`) }
	digitID := `{"decision":"USE_TOOL","confidence":0.9,"reasoning":"r","plan":{"steps":[{"id":"1","tool":"calculator_square","args":{"x":2}}]}}`
	offTool := `{"decision":"USE_TOOL","confidence":0.9,"reasoning":"r","plan":{"steps":[{"id":"a","tool":"rm_rf","args":{}}]}}`
	offered := offeredNames(calcTools())

	if _, err := parseAnswer(digitID, offered, nil); err == nil {
		t.Error("structural checks: an id starting with a digit passed")
	}
	if _, err := parseAnswer(digitID, offered, lenient); err != nil {
		t.Errorf("a Validate that accepts: got %v", err)
	}
	if _, err := parseAnswer(digitID, offered, strict); err == nil || err.Error() != `step "1": unknown argument "y"` {
		t.Errorf("a Validate that rejects: got %v, want its error as it is", err)
	}
	if _, err := parseAnswer(offTool, offered, lenient); err == nil || !strings.Contains(err.Error(), "not one of the listed tools") {
		t.Errorf("an unoffered tool with a lenient Validate: got %v, want rejected", err)
	}
}

func TestParseAnswerDropsPlanOfOtherDecisions(t *testing.T) {
	a, err := parseAnswer(`{"decision":"RETRIEVE","confidence":0.5,"reasoning":"r","plan":{"steps":"junk"}}`, nil, nil)
	if err != nil || a.Plan != nil {
		t.Errorf("got plan %s, error %v; want the plan dropped", a.Plan, err)
	}
}

func TestSchemaIsTheAnswerFormat(t *testing.T) {
	var doc struct {
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	if err := json.Unmarshal(schema(nil), &doc); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for k := range doc.Properties {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	want := []string{"clarifying_question", "confidence", "decision", "escalation_reason", "plan", "reasoning"}
	if !slices.Equal(keys, want) {
		t.Errorf("properties: got %v, want %v", keys, want)
	}
	if strings.Contains(string(schema(nil)), `"enum":["calculator`) || !strings.Contains(string(schema(nil)), `"enum":["USE_TOOL"`) {
		t.Errorf("the schema without tools should list the decisions and no tools: %s", schema(nil))
	}
}

func FuzzParseAnswer(f *testing.F) {
	for _, s := range []string{
		parallelAnswer,
		"```json\n" + parallelAnswer + "\n```",
		`{"decision":"USE_TOOL","confidence":0.5,"reasoning":"r","plan":{"steps":[{"id":"a","tool":"calculator_sin","args":{"x":1}},{"id":"b","tool":"calculator_square","args":{"x":"$<<a.result>>"},"depends_on":["a"]},{"id":"c","tool":"calculator_add","args":{"a":"$<<b>>","b":"$<<a.x[0]>>"},"foreach":"$<<b.items>>"}]}}`,
		`{"decision":"USE_TOOL","confidence":1,"reasoning":"","plan":{"steps":[{"id":"a","tool":"calculator_sin","depends_on":["a","a"]}]}}`,
		`{"decision":"CLARIFY","confidence":0.1,"reasoning":"r","clarifying_question":"which?"}`,
		`{"decision":"ESCALATE","confidence":0,"reasoning":"r","escalation_reason":"legal"}`,
		`{"decision":"REASON_ONLY","confidence":1e308}`,
		`{"confidence":NaN}`,
		`$<<a.`, ``, `null`, `[]`, `"x"`,
	} {
		f.Add(s)
	}
	tools := calcTools()
	offered := offeredNames(tools)
	thr := thresholds{high: 0.75, low: 0.5}
	f.Fuzz(func(t *testing.T, text string) {
		_, _ = strategyOf(json.RawMessage(text)) // must not panic
		a, err := parseAnswer(text, offered, nil)
		if err != nil {
			return
		}
		if !slices.Contains(decisions, a.Decision) {
			t.Fatalf("accepted decision %q", a.Decision)
		}
		if c := *a.Confidence; !(c >= 0 && c <= 1) {
			t.Fatalf("accepted confidence %v", c)
		}
		if a.Decision == UseTool {
			if a.graph.steps == 0 || a.graph.strategy() == NoTool {
				t.Fatalf("accepted USE_TOOL with graph %+v", a.graph)
			}
			for _, name := range a.graph.tools {
				if !offered[name] {
					t.Fatalf("accepted tool %q", name)
				}
			}
		} else if a.Plan != nil {
			t.Fatalf("kept a plan for %s", a.Decision)
		}
		for _, success := range []float64{-1, 0, 0.5, 1} {
			c, factors := composite(Request{Query: "q", Tools: tools, SuccessRate: success}, &a, thr)
			if !(c >= 0 && c <= 1) {
				t.Fatalf("confidence %v out of [0, 1]", c)
			}
			for k, v := range factors {
				if !(v >= 0 && v <= 1) {
					t.Fatalf("factor %s = %v out of [0, 1]", k, v)
				}
			}
		}
	})
}
