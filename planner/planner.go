// Package planner is mcp-router's decision engine. Given a request and the
// tools the router picked for it, it asks a chat model ([LLM]) what to do:
// use the tools with a plan, retrieve, reason only, ask a clarifying
// question, or escalate to a person.
//
// It validates the answer and retries once with the error, falls back to
// ESCALATE when the model fails, derives a plan's strategy from its graph
// (decision 7 in docs/design.md) and scores each decision with the
// composite confidence of docs/design.md. The proxy's plan tool and the CLI
// call it and hand USE_TOOL plans to the executor.
package planner

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"strings"
	"sync"
	"text/template"
	"time"

	"github.com/mcp-router/mcp-router/executor"
	"github.com/mcp-router/mcp-router/internal/clip"
	"github.com/mcp-router/mcp-router/internal/defaults"
	"github.com/mcp-router/mcp-router/prompts"
)

// Options configures a [Planner]. LLM is required; every other zero field
// takes the default documented on it.
type Options struct {
	// LLM is the chat model. Without one, every decision is the ESCALATE
	// fallback.
	LLM LLM
	// Validate checks a plan against the catalog (the executor's
	// validation); nil means the executor's rules alone (executor.Check).
	// Either way a plan may only use the request's tools.
	Validate func(plan json.RawMessage) error
	// Template renders the prompt: its top level is the system message,
	// its "user" block (if any) the user message, else the query is. It
	// gets .Query, .Context, .Tools (each .Name, .Description, .Schema and
	// .Output as compact JSON, .Output empty when the tool declares none)
	// and .Now (a time.Time). Default: prompts' decide.tmpl.
	Template *template.Template
	// Timeout bounds a whole decision, the one retry included; default 90s.
	Timeout time.Duration
	// SensitiveTopics are words or phrases that force ESCALATE when the
	// query contains them (case-insensitive, whole words), without asking
	// the model. Nil takes DefaultSensitiveTopics; an empty, non-nil list
	// turns the check off.
	SensitiveTopics []string
	// Logger receives a debug event per decision and a warning per
	// fallback, never a prompt; nil means silence.
	Logger *slog.Logger
	// Now is the clock for the prompt's current time; default time.Now.
	Now func() time.Time
}

// Planner makes decisions. It is safe for concurrent use.
type Planner struct {
	llm      LLM
	validate func(json.RawMessage) error
	tmpl     *template.Template
	timeout  time.Duration
	thr      thresholds
	topics   topics
	log      *slog.Logger
	now      func() time.Time
}

// defaultTemplate is decide.tmpl, parsed once.
var defaultTemplate = sync.OnceValues(func() (*template.Template, error) {
	return prompts.Load("decide", "")
})

// New returns a planner for opts. It does no I/O.
func New(opts Options) *Planner {
	if opts.SensitiveTopics == nil {
		opts.SensitiveTopics = DefaultSensitiveTopics
	}
	p := &Planner{
		llm:      opts.LLM,
		validate: opts.Validate,
		tmpl:     opts.Template,
		timeout:  opts.Timeout,
		thr:      thresholds{high: 0.75, low: 0.5}, // of the levels high (>= high), medium and low (< low)
		topics:   newTopics(opts.SensitiveTopics),
		log:      opts.Logger,
		now:      opts.Now,
	}
	if p.tmpl == nil {
		t, err := defaultTemplate()
		if err != nil {
			panic(fmt.Sprintf("planner: embedded prompt: %v", err)) // a build defect, caught by prompts' tests
		}
		p.tmpl = t
	}
	defaults.Set(&p.timeout, 90*time.Second)
	if p.log == nil {
		p.log = slog.New(slog.DiscardHandler)
	}
	if p.now == nil {
		p.now = time.Now
	}
	return p
}

// Tool is a tool the router offers for a request.
type Tool struct {
	Name, Description string
	InputSchema       json.RawMessage
	// OutputSchema is the tool's declared output schema, if any, shown so
	// that the model writes $<<id.path>> paths that exist.
	OutputSchema json.RawMessage
	// Score is the router's calibrated relevance in [0, 1] (decision 5 in
	// docs/design.md); 0 reads as "ranked poorly".
	Score float64
	// Own marks a tool of the client's own: a plan that uses one gets the
	// executor's rules alone, and the gateway cannot run it.
	Own bool
}

// Request is what to decide about.
type Request struct {
	Query   string
	Context string // the conversation so far, or anything else the model should know; may be empty
	Tools   []Tool // the only tools a plan may use
	// SuccessRate is the session's recent tool success rate in [0, 1];
	// negative means unknown.
	SuccessRate float64
}

// Decision is the planner's answer. Confidence is the composite score,
// not the model's own; Factors holds every factor of it.
type Decision struct {
	// Success is false for the fallback, and when a step of the plan
	// failed ([Planner.AfterRun]).
	Success bool `json:"success"`
	// Query is the request decided about, as given.
	Query              string             `json:"query"`
	Decision           string             `json:"decision"` // USE_TOOL | RETRIEVE | REASON_ONLY | CLARIFY | ESCALATE
	Strategy           string             `json:"strategy"` // SINGLE_TOOL | PARALLEL_TOOLS | SEQUENTIAL_TOOLS | HYBRID_TOOLS for USE_TOOL, else NO_TOOL
	Confidence         float64            `json:"confidence"`
	ModelConfidence    float64            `json:"model_confidence"`
	Reasoning          string             `json:"reasoning"`
	Plan               json.RawMessage    `json:"plan,omitempty"` // USE_TOOL only, as the model wrote it, compacted
	ClarifyingQuestion string             `json:"clarifying_question,omitempty"`
	EscalationReason   string             `json:"escalation_reason,omitempty"`
	Factors            map[string]float64 `json:"factors"`
	// TotalSteps, ExecutionSequence and PotentialIssues describe a
	// USE_TOOL plan, derived from it and the router's scores.
	TotalSteps int `json:"total_steps"`
	// OwnTools are the client's own tools (Tool.Own) the plan uses.
	OwnTools          []string `json:"own_tools,omitempty"`
	ExecutionSequence string   `json:"execution_sequence,omitempty"`
	PotentialIssues   []string `json:"potential_issues,omitempty"`
	Level             string   `json:"level"`    // high | medium | low
	Fallback          bool     `json:"fallback"` // the model gave no valid answer
	Attempts          int      `json:"attempts"` // model calls made
}

// Escalation reasons: the prefix of Decision.EscalationReason when the
// planner, not the model, escalates.
const (
	ReasonSensitiveTopic = "sensitive_topic"
	ReasonLowConfidence  = "confidence_below_threshold"
	ReasonModelError     = "response_generation_error" // no model, unreachable, HTTP error, timeout
	ReasonInvalidAnswer  = "invalid_answer"            // invalid after the retry
	ReasonInternal       = "internal_error"            // the prompt did not render
	ReasonToolFailure    = "tool_failure"              // a step of the plan failed when it ran
)

const (
	maxRetries       = 1    // an invalid answer is asked again once
	retryAnswerBytes = 2000 // of the invalid answer quoted back to the model
)

// Decide asks the model and returns its decision, scored, within Timeout.
// Every failure is the ESCALATE fallback.
func (p *Planner) Decide(ctx context.Context, req Request) Decision {
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	d := p.decide(ctx, req)
	d.Query, d.Success = req.Query, !d.Fallback
	p.log.Debug("decision", "decision", d.Decision, "strategy", d.Strategy, "confidence", d.Confidence,
		"level", d.Level, "attempts", d.Attempts, "fallback", d.Fallback, "dur", time.Since(start))
	return d
}

func (p *Planner) decide(ctx context.Context, req Request) Decision {
	if !hasText(req.Query) {
		return p.noModel(req, Clarify, "The request is empty.", "What would you like me to do?")
	}
	if topic := p.topics.match(req.Query); topic != "" {
		return p.noModel(req, Escalate, "The request touches a sensitive topic.", ReasonSensitiveTopic+": "+topic)
	}
	if p.llm == nil {
		return p.fallback(req, 0, ReasonModelError, "no chat model configured")
	}
	system, user, err := p.render(req)
	if err != nil {
		return p.fallback(req, 0, ReasonInternal, "rendering the prompt: "+err.Error())
	}
	offered := make(map[string]bool, len(req.Tools))
	names := make([]string, 0, len(req.Tools))
	for _, t := range req.Tools {
		offered[t.Name] = true
		names = append(names, t.Name)
	}
	format := schema(names)
	prompt := user
	for attempt := 1; ; attempt++ {
		text, err := p.llm.Chat(ctx, system, prompt, format)
		if err != nil {
			return p.fallback(req, attempt, ReasonModelError, err.Error())
		}
		a, err := parseAnswer(text, offered, ownAware(p.validate, req.Tools))
		if err == nil {
			return p.finish(req, a, attempt)
		}
		p.log.Debug("invalid answer", "attempt", attempt, "err", err, "answer", clip.Ellipsis(text, 500))
		if attempt > maxRetries {
			return p.fallback(req, attempt, ReasonInvalidAnswer, err.Error())
		}
		prompt = retryPrompt(user, text, err)
	}
}

// retryPrompt is the user message of the retry: the request, the invalid
// answer and what was wrong with it.
func retryPrompt(user, text string, err error) string {
	return fmt.Sprintf("%s\n\nYour previous answer:\n%s\n\nYour answer was invalid: %v. Answer again with valid JSON.",
		user, clip.Ellipsis(strings.TrimSpace(text), retryAnswerBytes), err)
}

// finish scores a valid answer: a USE_TOOL, RETRIEVE or REASON_ONLY below
// the low threshold asks the model's clarifying question if it wrote one,
// else escalates.
func (p *Planner) finish(req Request, a answer, attempts int) Decision {
	c, factors := composite(req, &a, p.thr)
	d := Decision{
		Decision:           a.Decision,
		Strategy:           a.graph.strategy(),
		Confidence:         c,
		ModelConfidence:    *a.Confidence,
		Reasoning:          a.Reasoning,
		ClarifyingQuestion: a.ClarifyingQuestion,
		EscalationReason:   a.EscalationReason,
		Factors:            factors,
		Attempts:           attempts,
	}
	if a.Decision == UseTool {
		d.Plan = json.RawMessage(compact(a.Plan))
		d.TotalSteps, d.ExecutionSequence = a.graph.steps, a.graph.sequence()
		d.OwnTools = ownUsed(req.Tools, a.graph.tools)
		d.PotentialIssues = issues(req, a.graph, factors, p.thr)
	}
	if a.Decision != Clarify && a.Decision != Escalate && c < p.thr.low {
		d.Decision, d.Strategy, d.Plan = Escalate, NoTool, nil
		d.TotalSteps, d.ExecutionSequence, d.OwnTools = 0, "", nil
		d.EscalationReason = fmt.Sprintf("%s: %.2f < %.2f", ReasonLowConfidence, c, p.thr.low)
		if hasText(a.ClarifyingQuestion) {
			d.Decision = Clarify
		}
	}
	return p.settle(d)
}

// noModel decides without the model: an empty query or a sensitive topic.
func (p *Planner) noModel(req Request, decision, reasoning, detail string) Decision {
	c, factors := composite(req, nil, p.thr)
	d := Decision{Decision: decision, Strategy: NoTool, Confidence: c, Reasoning: reasoning, Factors: factors}
	if decision == Clarify {
		d.ClarifyingQuestion = detail
	} else {
		d.EscalationReason = detail
	}
	return p.settle(d)
}

// fallback is the ESCALATE decision when the model gave no valid answer.
func (p *Planner) fallback(req Request, attempts int, reason, detail string) Decision {
	p.log.Warn("planner fallback", "reason", reason, "err", detail, "attempts", attempts)
	_, factors := composite(req, nil, p.thr)
	c := min(fallbackConfidence, p.thr.escalateCap())
	return Decision{
		Decision:         Escalate,
		Strategy:         NoTool,
		Confidence:       c,
		Reasoning:        "The planner could not get a valid decision from the model.",
		EscalationReason: reason + ": " + detail,
		Factors:          factors,
		Level:            p.thr.level(c),
		Fallback:         true,
		Attempts:         attempts,
	}
}

// settle caps the confidence of CLARIFY and ESCALATE, drops a question or
// reason that belongs to another decision, and sets the level.
func (p *Planner) settle(d Decision) Decision {
	if d.Decision == Clarify || d.Decision == Escalate {
		d.Confidence = min(d.Confidence, p.thr.escalateCap())
	}
	if d.Decision != Clarify {
		d.ClarifyingQuestion = ""
	}
	if d.Decision != Escalate {
		d.EscalationReason = ""
	}
	d.Level = p.thr.level(d.Confidence)
	return d
}

// StepFailure is a step of a decision's plan that failed when it ran: its
// id, its tool and the error the model reads.
type StepFailure struct {
	Step, Tool, Error string
}

// Failures are the steps of r that failed or timed out.
func Failures(r *executor.Result) []StepFailure {
	var failed []StepFailure
	for _, s := range r.Steps {
		if s.Status == executor.Failed || s.Status == executor.TimedOut {
			failed = append(failed, StepFailure{Step: s.ID, Tool: s.Tool, Error: s.Error})
		}
	}
	return failed
}

// AfterRun is d once its plan has run: unchanged when no step failed,
// else an ESCALATE with reason tool_failure naming the failed steps (every
// step is critical), no longer a success.
func (p *Planner) AfterRun(d Decision, failed []StepFailure) Decision {
	if len(failed) == 0 {
		return d
	}
	parts := make([]string, len(failed))
	for i, f := range failed {
		parts[i] = fmt.Sprintf("step %s (%s): %s", f.Step, f.Tool, f.Error)
	}
	if d.TotalSteps > 0 {
		d.Factors = maps.Clone(d.Factors)
		if d.Factors == nil {
			d.Factors = map[string]float64{}
		}
		d.Factors[FactorToolSuccessRate] = clamp01(float64(d.TotalSteps-len(failed)) / float64(d.TotalSteps))
	}
	d.Decision, d.Strategy, d.Plan, d.Success = Escalate, NoTool, nil, false
	d.TotalSteps, d.ExecutionSequence, d.OwnTools, d.PotentialIssues = 0, "", nil, nil
	d.EscalationReason = ReasonToolFailure + ": " + strings.Join(parts, "; ")
	return p.settle(d)
}
