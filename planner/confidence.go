package planner

import (
	"fmt"
	"math"
	"strings"
)

// Levels of a decision's confidence, by the thresholds.
const (
	High   = "high"
	Medium = "medium"
	Low    = "low"
)

// The weights of the composite confidence (docs/design.md):
//
//	confidence = 0.3*source_quality + 0.2*(1-query_complexity)
//	           + 0.3*context_completeness + 0.2*tool_success_rate
//	if conflict_detected: confidence *= 0.5
const (
	wSourceQuality       = 0.3
	wQueryComplexity     = 0.2
	wContextCompleteness = 0.3
	wToolSuccessRate     = 0.2
	conflictFactor       = 0.5
)

// poorScore is the router's keep threshold (decision 5 in docs/design.md):
// a plan using a tool scored below it contradicts the router.
const poorScore = 0.35

// fallbackConfidence is the confidence of the ESCALATE fallback.
const fallbackConfidence = 0.2

// Names of the factors in [Decision.Factors].
const (
	FactorSourceQuality       = "source_quality"
	FactorQueryComplexity     = "query_complexity"
	FactorContextCompleteness = "context_completeness"
	FactorToolSuccessRate     = "tool_success_rate"
	FactorConflict            = "conflict" // 1 when conflict_detected, else 0
	FactorBase                = "base"     // the weighted sum, before the conflict halving
)

// thresholds bound the levels: high (>= high), medium and low (< low).
type thresholds struct{ high, low float64 }

// level maps a confidence to high (>= high), medium (>= low) or low.
func (t thresholds) level(c float64) string {
	switch {
	case c >= t.high:
		return High
	case c >= t.low:
		return Medium
	}
	return Low
}

// escalateCap is the most confidence an ESCALATE or CLARIFY reports: 0.35
// at the defaults, always low.
func (t thresholds) escalateCap() float64 { return 0.7 * t.low }

// composite computes the composite confidence for answer a (nil: none,
// model confidence 0, no plan) on req. The factors:
//
//   - source_quality: the mean router score of the plan's tools for
//     USE_TOOL, else the best candidate's (sourceQuality);
//   - query_complexity: graph.complexity, 0 without a plan;
//   - context_completeness: the mean of "the request came with context"
//     (1 or 0) and the model's own confidence;
//   - tool_success_rate: the session's, 1 when unknown or for REASON_ONLY
//     (earlier failures do not make "Thanks!" doubtful);
//   - conflict_detected: see conflict.
func composite(req Request, a *answer, t thresholds) (float64, map[string]float64) {
	model, decision := 0.0, ""
	var g graph
	if a != nil {
		model, decision, g = *a.Confidence, a.Decision, a.graph
	}
	sq := sourceQuality(req.Tools, decision, g.tools)
	qc := g.complexity()
	cc := (b2f(hasText(req.Context)) + model) / 2
	tsr := req.SuccessRate
	if !(tsr >= 0) || decision == ReasonOnly { // negative or NaN: unknown; or no tool used
		tsr = 1
	}
	tsr = min(tsr, 1)
	base := wSourceQuality*sq + wQueryComplexity*(1-qc) + wContextCompleteness*cc + wToolSuccessRate*tsr
	c, conflicted := base, conflict(req, decision, model, sq, g.tools, t)
	if conflicted {
		c *= conflictFactor
	}
	factors := map[string]float64{
		FactorSourceQuality:       sq,
		FactorQueryComplexity:     qc,
		FactorContextCompleteness: cc,
		FactorToolSuccessRate:     tsr,
		FactorConflict:            b2f(conflicted),
		FactorBase:                base,
	}
	return clamp01(c), factors
}

// sourceQuality is the mean router score of the plan's tools for USE_TOOL,
// else the best candidate's score.
func sourceQuality(tools []Tool, decision string, used []string) float64 {
	if decision == UseTool && len(used) > 0 {
		sum := 0.0
		for _, name := range used {
			sum += scoreOf(tools, name)
		}
		return sum / float64(len(used))
	}
	best := 0.0
	for _, t := range tools {
		best = max(best, clamp01(t.Score))
	}
	return best
}

// conflict is the formula's conflict_detected, the model and the router
// being the sources: for USE_TOOL, one of the model's confidence and
// source_quality is high while the other is low, or the plan uses a tool
// scored below poorScore that the request does not name (a later step of
// a long request can score low though named); for REASON_ONLY, both are
// high. Other decisions have none.
func conflict(req Request, decision string, model, sq float64, used []string, t thresholds) bool {
	switch decision {
	case UseTool:
		if (model >= t.high && sq < t.low) || (model < t.low && sq >= t.high) {
			return true
		}
		for _, name := range used {
			if scoreOf(req.Tools, name) < poorScore && !named(req.Query, name) {
				return true
			}
		}
	case ReasonOnly:
		return model >= t.high && sq >= t.high
	}
	return false
}

// named reports whether query has a word starting with a word of tool's
// name past its prefix, of three letters or more, with at most three more
// ("squared" names calculator_square).
func named(query, tool string) bool {
	parts := words(tool)
	if len(parts) > 1 {
		parts = parts[1:]
	}
	q := words(query)
	for _, p := range parts {
		if len(p) < 3 {
			continue
		}
		for _, w := range q {
			if strings.HasPrefix(w, p) && len(w)-len(p) <= 3 {
				return true
			}
		}
	}
	return false
}

func scoreOf(tools []Tool, name string) float64 {
	for _, t := range tools {
		if t.Name == name {
			return clamp01(t.Score)
		}
	}
	return 0
}

func clamp01(x float64) float64 {
	if math.IsNaN(x) {
		return 0
	}
	return min(max(x, 0), 1)
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// issues lists what may go wrong with a USE_TOOL plan: tools scored under
// the low threshold, foreach steps, recent failures, and a conflict.
func issues(req Request, g graph, factors map[string]float64, t thresholds) []string {
	var out []string
	for _, name := range g.tools {
		if s := scoreOf(req.Tools, name); s < t.low {
			out = append(out, fmt.Sprintf("the router ranked %s low for this request (score %.2f): it may not do what is asked", name, s))
		}
	}
	for _, id := range g.foreachIDs {
		out = append(out, fmt.Sprintf("step %s runs once per element: its number of calls depends on the data", id))
	}
	if r := factors[FactorToolSuccessRate]; r < 0.5 {
		out = append(out, fmt.Sprintf("recent tool calls in this session often failed (success rate %.2f)", r))
	}
	if factors[FactorConflict] == 1 {
		out = append(out, "the model's confidence and the router's scores disagree")
	}
	return out
}
