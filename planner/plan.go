package planner

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/mcp-router/mcp-router/executor"
)

// Strategies, derived from a plan's graph by the executor's rules (decision
// 7 in docs/design.md), never asked of the model.
const (
	SingleTool      = "SINGLE_TOOL"      // one step (foreach or not)
	ParallelTools   = "PARALLEL_TOOLS"   // several steps, no dependencies
	SequentialTools = "SEQUENTIAL_TOOLS" // one path through every step
	HybridTools     = "HYBRID_TOOLS"     // anything else
	NoTool          = "NO_TOOL"          // no plan
)

// step is what the planner reads of a plan step (the executor owns the
// format).
type step struct {
	ID        string          `json:"id"`
	Tool      string          `json:"tool"`
	Args      json.RawMessage `json:"args"`
	DependsOn []string        `json:"depends_on"`
	Foreach   json.RawMessage `json:"foreach"`
}

type planDoc struct {
	Steps []step `json:"steps"`
}

// graph is what the planner derives from a plan's dependency graph.
type graph struct {
	steps      int
	edges      int        // dependencies between distinct steps
	depth      int        // steps on the longest dependency chain
	foreach    int        // steps with foreach
	tools      []string   // distinct tools, in plan order
	stages     [][]string // "id (tool)" by level, in plan order
	foreachIDs []string
}

// sequence describes the order the steps run in, in words: "a (t1) and
// b (t2) in parallel, then c (t3)".
func (g graph) sequence() string {
	parts := make([]string, 0, len(g.stages))
	for _, st := range g.stages {
		switch len(st) {
		case 0:
		case 1:
			parts = append(parts, st[0])
		default:
			parts = append(parts, strings.Join(st[:len(st)-1], ", ")+" and "+st[len(st)-1]+" in parallel")
		}
	}
	return strings.Join(parts, ", then ")
}

func isAbsent(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) == 0 || string(t) == "null"
}

func decodePlan(plan json.RawMessage) (planDoc, error) {
	var doc planDoc
	if !bytes.HasPrefix(bytes.TrimSpace(plan), []byte("{")) {
		return doc, errors.New(`plan: want an object {"steps":[...]}`)
	}
	if err := json.Unmarshal(plan, &doc); err != nil {
		return doc, fmt.Errorf("plan: %w", err)
	}
	return doc, nil
}

// checkPlan reads a USE_TOOL plan, which must have steps, use only the
// offered tools and pass validate (structural when nil), and returns its
// graph.
func checkPlan(plan json.RawMessage, offered map[string]bool, validate func(json.RawMessage) error) (graph, error) {
	if isAbsent(plan) {
		return graph{}, errors.New("USE_TOOL needs a plan")
	}
	doc, err := decodePlan(plan)
	if err != nil {
		return graph{}, err
	}
	if len(doc.Steps) == 0 {
		return graph{}, errors.New("plan: no steps")
	}
	for i, s := range doc.Steps {
		if !offered[s.Tool] {
			return graph{}, fmt.Errorf("plan: step %d (%q): tool %q is not one of the listed tools", i+1, s.ID, s.Tool)
		}
	}
	if validate == nil {
		validate = structural
	}
	if err := validate(plan); err != nil {
		return graph{}, err // the executor's message, as it is
	}
	return buildGraph(doc.Steps)
}

// buildGraph finds each step's level (1 + the deepest step it depends on,
// by depends_on or a reference) and fails on a cycle; unknown ids are left
// to the checks.
func buildGraph(steps []step) (graph, error) {
	index := make(map[string]int, len(steps))
	for i, s := range steps {
		if _, dup := index[s.ID]; !dup {
			index[s.ID] = i
		}
	}
	g := graph{steps: len(steps)}
	deps := make([][]int, len(steps))
	for i, s := range steps {
		for _, d := range slices.Concat(s.DependsOn, references(s)) {
			if j, ok := index[d]; ok && j != i && !slices.Contains(deps[i], j) {
				deps[i] = append(deps[i], j)
				g.edges++
			}
		}
	}
	levels := make([]int, len(steps)) // 0 = not yet known, -1 = being computed
	var level func(i int) (int, error)
	level = func(i int) (int, error) {
		switch levels[i] {
		case -1:
			return 0, fmt.Errorf("plan: cycle through step %q", steps[i].ID)
		case 0:
			levels[i] = -1
			l := 1
			for _, j := range deps[i] {
				lj, err := level(j)
				if err != nil {
					return 0, err
				}
				l = max(l, lj+1)
			}
			levels[i] = l
		}
		return levels[i], nil
	}
	seen := map[string]bool{}
	for i, s := range steps {
		l, err := level(i)
		if err != nil {
			return graph{}, err
		}
		g.depth = max(g.depth, l)
		for len(g.stages) < l {
			g.stages = append(g.stages, nil)
		}
		g.stages[l-1] = append(g.stages[l-1], fmt.Sprintf("%s (%s)", s.ID, s.Tool))
		if !isAbsent(s.Foreach) {
			g.foreach++
			g.foreachIDs = append(g.foreachIDs, s.ID)
		}
		if !seen[s.Tool] {
			seen[s.Tool] = true
			g.tools = append(g.tools, s.Tool)
		}
	}
	return g, nil
}

// references returns the step ids that s's args and foreach refer to, as
// the executor reads them.
func references(s step) []string {
	var ids []string
	for _, raw := range []json.RawMessage{s.Args, s.Foreach} {
		var v any
		if !isAbsent(raw) && json.Unmarshal(raw, &v) == nil {
			ids = append(ids, executor.References(v)...)
		}
	}
	return ids
}

func (g graph) strategy() string {
	switch {
	case g.steps == 0:
		return NoTool
	case g.steps == 1:
		return SingleTool
	case g.edges == 0:
		return ParallelTools
	case g.depth == g.steps:
		return SequentialTools
	}
	return HybridTools
}

// complexity is the formula's query_complexity in [0, 1]: 0.15 a step past
// the first, 0.2 a level past the first (each link of a chain can fail and
// delays the next), 0.1 a foreach.
func (g graph) complexity() float64 {
	if g.steps == 0 {
		return 0
	}
	c := 0.15*float64(g.steps-1) + 0.2*float64(g.depth-1) + 0.1*float64(g.foreach)
	return min(c, 1)
}

// ownAware returns validate, but structural for a plan that uses one of
// the client's own tools (which the catalog would refuse).
func ownAware(validate func(json.RawMessage) error, tools []Tool) func(json.RawMessage) error {
	own := map[string]bool{}
	for _, t := range tools {
		if t.Own {
			own[t.Name] = true
		}
	}
	if len(own) == 0 || validate == nil {
		return validate
	}
	return func(raw json.RawMessage) error {
		doc, err := decodePlan(raw)
		if err != nil {
			return err
		}
		if !slices.ContainsFunc(doc.Steps, func(s step) bool { return own[s.Tool] }) {
			return validate(raw)
		}
		return structural(raw)
	}
}

// structural checks a plan by the executor's rules alone.
func structural(raw json.RawMessage) error {
	p, err := executor.Decode(raw)
	if err == nil {
		err = executor.Check(p)
	}
	return err
}

// ownUsed returns the client's own tools among used.
func ownUsed(tools []Tool, used []string) []string {
	var out []string
	for _, name := range used {
		if slices.ContainsFunc(tools, func(t Tool) bool { return t.Own && t.Name == name }) {
			out = append(out, name)
		}
	}
	return out
}
