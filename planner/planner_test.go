package planner

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"text/template"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcp-router/mcp-router/internal/fakeollama"
)

// llmFunc adapts a function to [LLM].
type llmFunc func(ctx context.Context, system, user string, schema json.RawMessage) (string, error)

func (f llmFunc) Chat(ctx context.Context, system, user string, schema json.RawMessage) (string, error) {
	return f(ctx, system, user, schema)
}

func TestDecideValidPlan(t *testing.T) {
	srv, p := newFakePlanner(t, fakeollama.Options{Chat: script(parallelAnswer)}, Options{})
	d := p.Decide(t.Context(), Request{Query: "What is 5 factorial and 16 squared?", Tools: calcTools(), SuccessRate: -1})

	// source_quality (0.9+0.8)/2 = 0.85; query_complexity 0.15 (two
	// steps, one level); context_completeness (0+0.9)/2 = 0.45;
	// tool_success_rate unknown = 1. 0.3*0.85 + 0.2*0.85 + 0.3*0.45 + 0.2 = 0.76.
	want := Decision{
		Success:         true,
		Query:           "What is 5 factorial and 16 squared?",
		Decision:        UseTool,
		Strategy:        ParallelTools,
		Confidence:      0.76,
		ModelConfidence: 0.9,
		Reasoning:       "Two independent calculations.",
		Factors: map[string]float64{
			FactorSourceQuality: 0.85, FactorQueryComplexity: 0.15, FactorContextCompleteness: 0.45,
			FactorToolSuccessRate: 1, FactorConflict: 0, FactorBase: 0.76,
		},
		TotalSteps:        2,
		ExecutionSequence: "f (calculator_factorial) and q (calculator_square) in parallel",
		Level:             High,
		Attempts:          1,
	}
	if diff := cmp.Diff(want, d, approx, cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".Plan" }, cmp.Ignore())); diff != "" {
		t.Errorf("decision (-want +got):\n%s", diff)
	}
	diffJSON(t, json.RawMessage(parallelPlan), d.Plan)
	if got := srv.ChatCalls(); got != 1 {
		t.Errorf("chat calls: got %d, want 1", got)
	}
}

func TestDecidePromptCarriesToolsAndSchema(t *testing.T) {
	var (
		mu   sync.Mutex
		seen []fakeollama.ChatRequest
	)
	chat := func(req fakeollama.ChatRequest) (string, error) {
		mu.Lock()
		seen = append(seen, req)
		mu.Unlock()
		return parallelAnswer, nil
	}
	now := time.Date(2026, 5, 4, 3, 2, 0, 0, time.UTC)
	_, p := newFakePlanner(t, fakeollama.Options{Chat: chat}, Options{Now: func() time.Time { return now }})
	tools := calcTools()[:2]
	tools[0].OutputSchema = json.RawMessage(`{"type": "object", "properties": {"result": {"type": "number"}}, "required": ["result"]}`)
	p.Decide(t.Context(), Request{Query: "5! and 16²", Context: "homework help", Tools: tools})

	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 1 {
		t.Fatalf("chat requests: got %d, want 1", len(seen))
	}
	req := seen[0]
	if req.Model != "qwen3:4b" {
		t.Errorf("model: got %q, want qwen3:4b", req.Model)
	}
	if req.Stream == nil || *req.Stream {
		t.Error("stream: got true or unset, want false")
	}
	if got := req.Options["temperature"]; got != float64(0) {
		t.Errorf("temperature: got %v, want 0", got)
	}
	if len(req.Messages) != 2 || req.Messages[0].Role != "system" || req.Messages[1].Role != "user" {
		t.Fatalf("messages: got %+v, want system then user", req.Messages)
	}
	system, user := req.Messages[0].Content, req.Messages[1].Content
	for _, want := range []string{
		"- calculator_factorial: Return n! for a whole number x.",
		`args: {"type":"object","properties":{"x":{"type":"number"}},"required":["x"]}`,
		`  result: {"type":"object","properties":{"result":{"type":"number"}},"required":["result"]}`,
		"- calculator_square: Square x.",
	} {
		if !strings.Contains(system, want) {
			t.Errorf("system prompt lacks %q", want)
		}
	}
	if n := strings.Count(system, "  result: "); n != 1 {
		t.Errorf("result schemas in the prompt: got %d, want 1 (only factorial declares one)", n)
	}
	if strings.Contains(system, "calculator_sqrt") {
		t.Error("system prompt lists a tool the request did not offer")
	}
	for _, want := range []string{"5! and 16²", "homework help", "2026-05-04 03:02 UTC"} {
		if !strings.Contains(user, want) {
			t.Errorf("user message lacks %q:\n%s", want, user)
		}
	}
	var format struct {
		Properties struct {
			Plan struct {
				Properties struct {
					Steps struct {
						Items struct {
							Properties struct {
								Tool struct {
									Enum []string `json:"enum"`
								} `json:"tool"`
							} `json:"properties"`
						} `json:"items"`
					} `json:"steps"`
				} `json:"properties"`
			} `json:"plan"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	if err := json.Unmarshal(req.Format, &format); err != nil {
		t.Fatalf("format %s: %v", req.Format, err)
	}
	if diff := cmp.Diff([]string{"calculator_factorial", "calculator_square"}, format.Properties.Plan.Properties.Steps.Items.Properties.Tool.Enum); diff != "" {
		t.Errorf("format's tool enum (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"decision", "confidence", "reasoning"}, format.Required); diff != "" {
		t.Errorf("format's required (-want +got):\n%s", diff)
	}
}

func TestDecideRetriesInvalidJSON(t *testing.T) {
	var (
		mu    sync.Mutex
		users []string
	)
	answers := script("Use the calculator, twice.", parallelAnswer)
	chat := func(req fakeollama.ChatRequest) (string, error) {
		mu.Lock()
		users = append(users, lastUser(req))
		mu.Unlock()
		return answers(req)
	}
	srv, p := newFakePlanner(t, fakeollama.Options{Chat: chat}, Options{})
	d := p.Decide(t.Context(), Request{Query: "What is 5 factorial and 16 squared?", Tools: calcTools()})
	if d.Decision != UseTool || d.Attempts != 2 || d.Fallback {
		t.Errorf("got %s after %d attempts (fallback %v), want USE_TOOL after 2", d.Decision, d.Attempts, d.Fallback)
	}
	if got := srv.ChatCalls(); got != 2 {
		t.Errorf("chat calls: got %d, want 2", got)
	}
	mu.Lock()
	defer mu.Unlock()
	retry := users[1]
	for _, want := range []string{users[0], "Your previous answer:\nUse the calculator, twice.", "Your answer was invalid: the answer is not a JSON object", "Answer again with valid JSON."} {
		if !strings.Contains(retry, want) {
			t.Errorf("retry message lacks %q:\n%s", want, retry)
		}
	}
}

func TestDecideFallsBackAfterTwoInvalidAnswers(t *testing.T) {
	bad := `{"decision":"MAYBE","confidence":0.9,"reasoning":"unsure"}`
	srv, p := newFakePlanner(t, fakeollama.Options{Chat: script(bad)}, Options{})
	d := p.Decide(t.Context(), Request{Query: "What is 5 factorial?", Tools: calcTools()})
	if !d.Fallback || d.Decision != Escalate || d.Attempts != 2 {
		t.Fatalf("got %s (fallback %v) after %d attempts, want the ESCALATE fallback after 2", d.Decision, d.Fallback, d.Attempts)
	}
	if d.Confidence != fallbackConfidence || d.Level != Low || d.Plan != nil || d.Strategy != NoTool {
		t.Errorf("got confidence %v, level %s, plan %s, strategy %s; want 0.2, low, none, NO_TOOL", d.Confidence, d.Level, d.Plan, d.Strategy)
	}
	if want := ReasonInvalidAnswer + `: decision "MAYBE" is not one of`; !strings.HasPrefix(d.EscalationReason, want) {
		t.Errorf("reason: got %q, want prefix %q", d.EscalationReason, want)
	}
	if got := srv.ChatCalls(); got != 2 {
		t.Errorf("chat calls: got %d, want 2", got)
	}
}

func TestDecideRetriesClarifyWithoutQuestion(t *testing.T) {
	var (
		mu    sync.Mutex
		retry string
	)
	answers := script(
		`{"decision":"CLARIFY","confidence":0.4,"reasoning":"Which number?"}`,
		`{"decision":"CLARIFY","confidence":0.4,"reasoning":"Which number?","clarifying_question":"Which number should I square?"}`,
	)
	chat := func(req fakeollama.ChatRequest) (string, error) {
		mu.Lock()
		retry = lastUser(req)
		mu.Unlock()
		return answers(req)
	}
	_, p := newFakePlanner(t, fakeollama.Options{Chat: chat}, Options{})
	d := p.Decide(t.Context(), Request{Query: "Square it", Tools: calcTools()})
	if d.Decision != Clarify || d.Attempts != 2 || d.ClarifyingQuestion != "Which number should I square?" {
		t.Errorf("got %s %q after %d attempts, want CLARIFY with the question after 2", d.Decision, d.ClarifyingQuestion, d.Attempts)
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(retry, "CLARIFY needs a clarifying_question") {
		t.Errorf("retry message does not say what was wrong:\n%s", retry)
	}
}

func TestDecideRetriesWhenValidateRejects(t *testing.T) {
	badArgs := `{"decision":"USE_TOOL","confidence":0.9,"reasoning":"r","plan":{"steps":[{"id":"f","tool":"calculator_factorial","args":{"x":"five"}}]}}`
	good := `{"decision":"USE_TOOL","confidence":0.9,"reasoning":"r","plan":{"steps":[{"id":"f","tool":"calculator_factorial","args":{"x":5}}]}}`
	var (
		mu    sync.Mutex
		retry string
	)
	answers := script(badArgs, good)
	chat := func(req fakeollama.ChatRequest) (string, error) {
		mu.Lock()
		retry = lastUser(req)
		mu.Unlock()
		return answers(req)
	}
	validate := func(plan json.RawMessage) error {
		if strings.Contains(string(plan), `"five"`) {
			return errors.New(`step "f": args.x: want a number`)
		}
		return nil
	}
	_, p := newFakePlanner(t, fakeollama.Options{Chat: chat}, Options{Validate: validate})
	d := p.Decide(t.Context(), Request{Query: "5 factorial", Tools: calcTools()})
	if d.Decision != UseTool || d.Attempts != 2 || d.Strategy != SingleTool {
		t.Errorf("got %s/%s after %d attempts, want USE_TOOL/SINGLE after 2", d.Decision, d.Strategy, d.Attempts)
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(retry, `Your answer was invalid: step "f": args.x: want a number.`) {
		t.Errorf("retry message lacks the validation error:\n%s", retry)
	}
}

func TestDecideTimeoutFallsBackInTime(t *testing.T) {
	srv, p := newFakePlanner(t, fakeollama.Options{Chat: script(parallelAnswer), Delay: time.Hour}, Options{Timeout: 200 * time.Millisecond})
	start := time.Now()
	d := p.Decide(t.Context(), Request{Query: "What is 5 factorial?", Tools: calcTools()})
	if dur := time.Since(start); dur > 5*time.Second {
		t.Errorf("Decide took %v with a 200ms timeout", dur)
	}
	if !d.Fallback || d.Decision != Escalate || d.Attempts != 1 {
		t.Errorf("got %s (fallback %v) after %d attempts, want the fallback after 1", d.Decision, d.Fallback, d.Attempts)
	}
	if !strings.HasPrefix(d.EscalationReason, ReasonModelError+": ") || !strings.Contains(d.EscalationReason, "no answer in time") {
		t.Errorf("reason: got %q, want a timeout", d.EscalationReason)
	}
	if got := srv.ChatCalls(); got != 1 {
		t.Errorf("chat calls: got %d, want 1 (no retry after a timeout)", got)
	}
}

func TestDecideCallerCancelFallsBack(t *testing.T) {
	_, p := newFakePlanner(t, fakeollama.Options{Delay: time.Hour}, Options{})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	d := p.Decide(ctx, Request{Query: "What is 5 factorial?", Tools: calcTools()})
	if !d.Fallback || !strings.Contains(d.EscalationReason, "context canceled") {
		t.Errorf("got %s %q, want the fallback naming the cancellation", d.Decision, d.EscalationReason)
	}
}

func TestDecideUnreachableModelFallsBack(t *testing.T) {
	srv := fakeollama.New(fakeollama.Options{})
	url, client := srv.URL(), srv.Client()
	srv.Close()
	llm, err := NewOllamaLLM(OllamaOptions{URL: url, Model: "qwen3:4b", HTTPClient: client})
	if err != nil {
		t.Fatal(err)
	}
	d := New(Options{LLM: llm}).Decide(t.Context(), Request{Query: "What is 5 factorial?", Tools: calcTools()})
	if !d.Fallback || d.Decision != Escalate || d.Attempts != 1 {
		t.Fatalf("got %s (fallback %v) after %d attempts, want the fallback after 1", d.Decision, d.Fallback, d.Attempts)
	}
	if !strings.Contains(d.EscalationReason, "server unreachable") {
		t.Errorf("reason: got %q, want it to say the server is unreachable", d.EscalationReason)
	}
	if strings.Contains(d.EscalationReason, "127.0.0.1") || strings.Contains(d.EscalationReason, "http") {
		t.Errorf("reason %q carries the server's address", d.EscalationReason)
	}
}

func TestDecideHTTPErrorFallsBackWithoutRetry(t *testing.T) {
	for _, tc := range []struct {
		name       string
		fopts      fakeollama.Options
		wantReason string
	}{
		{"server error", fakeollama.Options{Chat: func(fakeollama.ChatRequest) (string, error) {
			return "", &fakeollama.HTTPError{Status: http.StatusServiceUnavailable, Message: "server busy"}
		}}, "status 503: server busy"},
		{"model not pulled", fakeollama.Options{Models: []string{"llama3.2"}}, `model "qwen3:4b": status 404`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, p := newFakePlanner(t, tc.fopts, Options{})
			d := p.Decide(t.Context(), Request{Query: "What is 5 factorial?", Tools: calcTools()})
			if !d.Fallback || !strings.Contains(d.EscalationReason, tc.wantReason) {
				t.Errorf("got %s %q, want the fallback with %q", d.Decision, d.EscalationReason, tc.wantReason)
			}
			if got := srv.ChatCalls(); got != 1 {
				t.Errorf("chat calls: got %d, want 1", got)
			}
		})
	}
}

func TestDecideSensitiveTopicEscalates(t *testing.T) {
	srv, p := newFakePlanner(t, fakeollama.Options{Chat: script(parallelAnswer)},
		Options{SensitiveTopics: []string{"legal action", "refund"}})
	d := p.Decide(t.Context(), Request{Query: "Compute my REFUND: 5 factorial dollars", Tools: calcTools()})
	if d.Decision != Escalate || d.EscalationReason != "sensitive_topic: refund" || d.Fallback {
		t.Errorf("got %s %q (fallback %v), want ESCALATE sensitive_topic: refund", d.Decision, d.EscalationReason, d.Fallback)
	}
	if d.Confidence > 0.35 || d.Level != Low || d.Plan != nil {
		t.Errorf("got confidence %v, level %s, plan %s; want at most 0.35, low, none", d.Confidence, d.Level, d.Plan)
	}
	if got := srv.ChatCalls(); got != 0 {
		t.Errorf("chat calls: got %d, want 0 (a sensitive topic needs no model)", got)
	}
	if d := p.Decide(t.Context(), Request{Query: "What is 5 factorial? refunded later", Tools: calcTools()}); d.Decision != UseTool {
		t.Errorf("a query without the whole word: got %s, want USE_TOOL", d.Decision)
	}
}

// stub returns a planner whose model always answers text.
func stub(text string, opts Options) *Planner {
	opts.LLM = llmFunc(func(context.Context, string, string, json.RawMessage) (string, error) { return text, nil })
	return New(opts)
}

func TestDecideLowConfidenceToolUse(t *testing.T) {
	// docs_search scores 0.2: source_quality 0.2, query_complexity 0,
	// context_completeness 0.45, tool_success_rate 1: base 0.595; the
	// model is sure and the router is not, so conflict halves it: 0.2975.
	plan := `{"steps":[{"id":"s","tool":"docs_search","args":{"query":"pricing"}}]}`
	for _, tc := range []struct {
		name, extra  string
		want         string
		wantQuestion string
		wantReason   string
	}{
		{"escalates", "", Escalate, "", "confidence_below_threshold: 0.30 < 0.50"},
		{"asks the model's question", `,"clarifying_question":"Which product?"`, Clarify, "Which product?", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text := `{"decision":"USE_TOOL","confidence":0.9,"reasoning":"r","plan":` + plan + tc.extra + `}`
			d := stub(text, Options{}).Decide(t.Context(), Request{Query: "pricing?", Tools: calcTools(), SuccessRate: -1})
			if d.Decision != tc.want || d.ClarifyingQuestion != tc.wantQuestion || d.EscalationReason != tc.wantReason {
				t.Errorf("got %s %q %q, want %s %q %q", d.Decision, d.ClarifyingQuestion, d.EscalationReason, tc.want, tc.wantQuestion, tc.wantReason)
			}
			if d.Plan != nil || d.Strategy != NoTool || d.Level != Low || d.Fallback {
				t.Errorf("got plan %s, strategy %s, level %s, fallback %v; want none, NO_TOOL, low, false", d.Plan, d.Strategy, d.Level, d.Fallback)
			}
			if diff := cmp.Diff(0.2975, d.Confidence, approx); diff != "" {
				t.Errorf("confidence (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecideCapsClarifyAndEscalate(t *testing.T) {
	for _, text := range []string{
		`{"decision":"ESCALATE","confidence":0.95,"reasoning":"r","escalation_reason":"deletes data"}`,
		`{"decision":"CLARIFY","confidence":0.95,"reasoning":"r","clarifying_question":"Which file?"}`,
	} {
		ctx := "We talked about files."
		d := stub(text, Options{}).Decide(t.Context(), Request{Query: "delete it", Context: ctx, Tools: calcTools(), SuccessRate: 1})
		if d.Confidence != 0.35 || d.Level != Low {
			t.Errorf("%s: got confidence %v, level %s; want 0.35, low (an escalation is always low)", d.Decision, d.Confidence, d.Level)
		}
	}
}

func TestDecideDropsPlanOfOtherDecisions(t *testing.T) {
	text := `{"decision":"REASON_ONLY","confidence":0.8,"reasoning":"Just thanks.","plan":` + parallelPlan + `}`
	d := stub(text, Options{}).Decide(t.Context(), Request{Query: "thanks!", Context: "We added numbers.", Tools: nil, SuccessRate: -1})
	if d.Decision != ReasonOnly || d.Plan != nil || d.Strategy != NoTool {
		t.Errorf("got %s, plan %s, strategy %s; want REASON_ONLY, no plan, NO_TOOL", d.Decision, d.Plan, d.Strategy)
	}
	// source_quality 0 (no candidates), complexity 0, context (1+0.8)/2,
	// success unknown: 0 + 0.2 + 0.27 + 0.2 = 0.67.
	if diff := cmp.Diff(0.67, d.Confidence, approx); diff != "" || d.Level != Medium {
		t.Errorf("confidence (-want +got):\n%s level %s, want medium", diff, d.Level)
	}
}

func TestDecideWithoutModelCall(t *testing.T) {
	calls := 0
	llm := llmFunc(func(context.Context, string, string, json.RawMessage) (string, error) {
		calls++
		return parallelAnswer, nil
	})
	broken := template.Must(template.New("decide").Option("missingkey=error").Parse("{{.Nope}}"))
	for _, tc := range []struct {
		name       string
		opts       Options
		query      string
		want       string
		wantDetail string
		fallback   bool
	}{
		{"empty query asks", Options{LLM: llm}, "  ", Clarify, "What would you like me to do?", false},
		{"no model", Options{}, "5!", Escalate, "response_generation_error: no chat model configured", true},
		{"broken template", Options{LLM: llm, Template: broken}, "5!", Escalate, "internal_error: rendering the prompt", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := New(tc.opts).Decide(t.Context(), Request{Query: tc.query, Tools: calcTools()})
			detail := d.ClarifyingQuestion + d.EscalationReason
			if d.Decision != tc.want || !strings.HasPrefix(detail, tc.wantDetail) || d.Fallback != tc.fallback || d.Attempts != 0 {
				t.Errorf("got %s %q (fallback %v, attempts %d), want %s %q (fallback %v, attempts 0)",
					d.Decision, detail, d.Fallback, d.Attempts, tc.want, tc.wantDetail, tc.fallback)
			}
		})
	}
	if calls != 0 {
		t.Errorf("model calls: got %d, want 0", calls)
	}
}

func TestDecideTemplateWithoutUserBlockSendsTheQuery(t *testing.T) {
	var gotSystem, gotUser string
	llm := llmFunc(func(_ context.Context, system, user string, _ json.RawMessage) (string, error) {
		gotSystem, gotUser = system, user
		return parallelAnswer, nil
	})
	tmpl := template.Must(template.New("decide").Parse("Plan with {{range .Tools}}{{.Name}} {{end}}"))
	New(Options{LLM: llm, Template: tmpl}).Decide(t.Context(), Request{Query: " 5! and 16² ", Tools: calcTools()[:2]})
	if want := "Plan with calculator_factorial calculator_square"; gotSystem != want {
		t.Errorf("system: got %q, want %q", gotSystem, want)
	}
	if want := "5! and 16²"; gotUser != want {
		t.Errorf("user: got %q, want %q", gotUser, want)
	}
}

func TestDecisionJSON(t *testing.T) {
	stray := strings.Replace(parallelAnswer, `"plan":`, `"clarifying_question":"?","escalation_reason":"no","plan":`, 1)
	d := stub(stray, Options{}).Decide(t.Context(), Request{Query: "5! and 16²", Tools: calcTools()})
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"success", "query", "decision", "strategy", "confidence", "model_confidence", "reasoning", "plan", "factors", "level", "fallback", "attempts"} {
		if _, ok := got[key]; !ok {
			t.Errorf("JSON lacks %q: %s", key, b)
		}
	}
	for _, key := range []string{"clarifying_question", "escalation_reason"} {
		if _, ok := got[key]; ok {
			t.Errorf("JSON has empty %q: %s", key, b)
		}
	}
}

// "Always below 0.5 when escalating" holds for every decision: a
// RETRIEVE or REASON_ONLY below the low threshold escalates too.
func TestDecideLowConfidenceEscalatesEveryDecision(t *testing.T) {
	for _, decision := range []string{Retrieve, ReasonOnly} {
		text := `{"decision":"` + decision + `","confidence":0.1,"reasoning":"r"}`
		d := stub(text, Options{}).Decide(t.Context(), Request{Query: "what about it?", Tools: nil, SuccessRate: 0})
		if d.Decision != Escalate || !strings.HasPrefix(d.EscalationReason, ReasonLowConfidence) || d.Confidence >= 0.5 {
			t.Errorf("%s at confidence 0.1: got %s %q at %.2f, want ESCALATE for %s below 0.5", decision, d.Decision, d.EscalationReason, d.Confidence, ReasonLowConfidence)
		}
	}
}

// The sensitive topics default to DefaultSensitiveTopics; an empty list
// turns the check off.
func TestDecideDefaultSensitiveTopics(t *testing.T) {
	text := `{"decision":"REASON_ONLY","confidence":0.9,"reasoning":"r"}`
	req := Request{Query: "I want a Refund for the whole year", Context: "billing", SuccessRate: -1}
	if d := stub(text, Options{}).Decide(t.Context(), req); d.Decision != Escalate || d.EscalationReason != ReasonSensitiveTopic+": refund" {
		t.Errorf("default topics: got %s %q, want ESCALATE %q", d.Decision, d.EscalationReason, ReasonSensitiveTopic+": refund")
	}
	if d := stub(text, Options{SensitiveTopics: []string{}}).Decide(t.Context(), req); d.Decision == Escalate {
		t.Errorf("no topics: got ESCALATE %q, want the model's REASON_ONLY", d.EscalationReason)
	}
}

// A USE_TOOL decision describes its plan: the steps, the order they run
// in, and what may go wrong (a tool the router ranked low, a foreach,
// recent failures).
func TestDecideDescribesThePlan(t *testing.T) {
	plan := `{"steps":[{"id":"s","tool":"calculator_sin","args":{"x":1}},` +
		`{"id":"q","tool":"calculator_square","args":{"x":"$<<s.result>>"},"purpose":"Square the sine."},` +
		`{"id":"e","tool":"calculator_factorial","args":{"n":"$<<item>>"},"foreach":"$<<q.result>>"}]}`
	text := `{"decision":"USE_TOOL","confidence":0.95,"reasoning":"r","plan":` + plan + `}`
	tools := []Tool{{Name: "calculator_sin", Score: 0.9}, {Name: "calculator_square", Score: 0.9}, {Name: "calculator_factorial", Score: 0.4}}
	d := stub(text, Options{}).Decide(t.Context(), Request{Query: "sine, squared, then factorials", Context: "math", Tools: tools, SuccessRate: 1})
	if d.Decision != UseTool {
		t.Fatalf("got %s (%s), want USE_TOOL", d.Decision, d.EscalationReason)
	}
	if d.TotalSteps != 3 || d.ExecutionSequence != "s (calculator_sin), then q (calculator_square), then e (calculator_factorial)" {
		t.Errorf("got %d steps, sequence %q", d.TotalSteps, d.ExecutionSequence)
	}
	want := []string{"calculator_factorial low", "step e runs once per element"}
	if len(d.PotentialIssues) < len(want) {
		t.Fatalf("potential issues %q, want ones about %q", d.PotentialIssues, want)
	}
	for i, w := range want {
		if !strings.Contains(d.PotentialIssues[i], w) {
			t.Errorf("potential issue %d: %q, want it to mention %q", i, d.PotentialIssues[i], w)
		}
	}
}

// A plan may use the client's own tools: it gets the structural checks,
// not the catalog's validation, and the decision names them.
func TestDecideWithTheClientsOwnTools(t *testing.T) {
	plan := `{"steps":[{"id":"a","tool":"calculator_add","args":{"a":1,"b":2}},` +
		`{"id":"n","tool":"notify_user","args":{"text":"$<<a.result>>"}}]}`
	text := `{"decision":"USE_TOOL","confidence":0.9,"reasoning":"r","plan":` + plan + `}`
	tools := []Tool{{Name: "calculator_add", Score: 0.9}, {Name: "notify_user", Score: 0.8, Own: true}}
	catalogOnly := func(raw json.RawMessage) error {
		if strings.Contains(string(raw), "notify_user") {
			return errors.New("unknown tool notify_user")
		}
		return nil
	}
	d := stub(text, Options{Validate: catalogOnly}).Decide(t.Context(), Request{Query: "add 1 and 2 and tell me", Context: "c", Tools: tools, SuccessRate: 1})
	if d.Decision != UseTool || !slices.Equal(d.OwnTools, []string{"notify_user"}) {
		t.Errorf("got %s (%s), own tools %v; want USE_TOOL using notify_user", d.Decision, d.EscalationReason, d.OwnTools)
	}
	bad := `{"decision":"USE_TOOL","confidence":0.9,"reasoning":"r","plan":{"steps":[{"id":"n","tool":"notify_user","args":{},"depends_on":["x"]}]}}`
	if d := stub(bad, Options{Validate: catalogOnly}).Decide(t.Context(), Request{Query: "tell me", Tools: tools, SuccessRate: 1}); !d.Fallback {
		t.Errorf("a plan of own tools depending on a missing step: got %s, want the fallback", d.Decision)
	}
}
