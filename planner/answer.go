package planner

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/mcp-router/mcp-router/internal/clip"
)

// Decisions, as docs/design.md names them.
const (
	UseTool    = "USE_TOOL"    // run a plan of the listed tools
	Retrieve   = "RETRIEVE"    // facts are needed that no listed tool gets: search further
	ReasonOnly = "REASON_ONLY" // answer from the request and context alone
	Clarify    = "CLARIFY"     // ask the user a question first
	Escalate   = "ESCALATE"    // a person must decide
)

var decisions = []string{UseTool, Retrieve, ReasonOnly, Clarify, Escalate}

// answer is the model's reply, before scoring.
type answer struct {
	Decision           string          `json:"decision"`
	Confidence         *float64        `json:"confidence"`
	Reasoning          string          `json:"reasoning"`
	Plan               json.RawMessage `json:"plan"`
	ClarifyingQuestion string          `json:"clarifying_question"`
	EscalationReason   string          `json:"escalation_reason"`

	graph graph // of Plan, for USE_TOOL
}

// answerSchema is the JSON schema of the model's answer, used as the
// structured-output format; the verbs are the decisions and the steps'
// "tool" schema.
const answerSchema = `{"properties": {
	"clarifying_question": {"type": "string"},
	"confidence": {"maximum": 1, "minimum": 0, "type": "number"},
	"decision": {"enum": %s, "type": "string"},
	"escalation_reason": {"type": "string"},
	"plan": {
		"properties": {"steps": {"items": {"properties": {
			"args": {"type": "object"},
			"depends_on": {"items": {"type": "string"}, "type": "array"},
			"id": {"type": "string"},
			"purpose": {"type": "string"},
			"tool": %s
		}, "required": ["id", "tool", "args"], "type": "object"}, "minItems": 1, "type": "array"}},
		"required": ["steps"], "type": "object"
	},
	"reasoning": {"type": "string"}
}, "required": ["decision", "confidence", "reasoning"], "type": "object"}`

// schema is answerSchema with the steps' "tool" restricted to tools (any
// string when tools is empty).
func schema(tools []string) json.RawMessage {
	tool := map[string]any{"type": "string"}
	if len(tools) > 0 {
		tool["enum"] = tools
	}
	t, _ := json.Marshal(tool)
	d, _ := json.Marshal(decisions)
	var b bytes.Buffer
	if err := json.Compact(&b, fmt.Appendf(nil, answerSchema, d, t)); err != nil {
		panic(err) // cannot happen: answerSchema is valid JSON
	}
	return b.Bytes()
}

// parseAnswer reads and validates the model's reply: a known decision, a
// confidence in [0, 1], a plan for USE_TOOL, a question for CLARIFY, a
// reason for ESCALATE; a plan with another decision is dropped. The error
// is written for the model to correct.
func parseAnswer(text string, offered map[string]bool, validate func(json.RawMessage) error) (answer, error) {
	var a answer
	body := unfence(text)
	if body == "" {
		return a, errors.New("the answer is empty")
	}
	if err := json.Unmarshal([]byte(body), &a); err != nil {
		return a, fmt.Errorf("the answer is not a JSON object of the schema: %w", err)
	}
	if !slices.Contains(decisions, a.Decision) {
		return a, fmt.Errorf("decision %q is not one of %s", clip.Ellipsis(a.Decision, 40), strings.Join(decisions, ", "))
	}
	if a.Confidence == nil {
		return a, errors.New("confidence is missing")
	}
	if c := *a.Confidence; math.IsNaN(c) || c < 0 || c > 1 {
		return a, fmt.Errorf("confidence %v is not between 0 and 1", c)
	}
	switch a.Decision {
	case UseTool:
		g, err := checkPlan(a.Plan, offered, validate)
		if err != nil {
			return a, err
		}
		a.graph = g
	case Clarify:
		if strings.TrimSpace(a.ClarifyingQuestion) == "" {
			return a, errors.New("CLARIFY needs a clarifying_question")
		}
	case Escalate:
		if strings.TrimSpace(a.EscalationReason) == "" {
			return a, errors.New("ESCALATE needs an escalation_reason")
		}
	}
	if a.Decision != UseTool {
		a.Plan = nil
	}
	return a, nil
}

// unfence trims text and a Markdown code fence around it.
func unfence(text string) string {
	t := strings.TrimSpace(text)
	if rest, ok := strings.CutPrefix(t, "```"); ok {
		if nl := strings.IndexByte(rest, '\n'); nl >= 0 {
			rest = rest[nl+1:] // drop the language tag
		}
		t = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "```"))
	}
	return t
}
