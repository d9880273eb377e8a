package executor

import (
	"slices"
	"strings"
	"time"
)

// Graph is a validated plan: its steps with compiled arguments, their
// dependencies, and the limits it runs under.
type Graph struct {
	Strategy Strategy
	Waves    [][]string // topological levels: a step's level is one more than its deepest dependency's

	steps    []*gstep
	index    map[string]int
	output   *tmpl
	onError  string
	deadline time.Duration
	parallel int
	dryRun   bool
}

// gstep is one validated step.
type gstep struct {
	id, tool, upstream string
	args               *tmpl
	hasRefs            bool        // args hold references: validate them again once filled in
	input              *toolSchema // nil when the tool has none
	foreach            *ref
	deps, dependants   []int // by plan index, sorted, unique
	timeout            time.Duration
}

// link sorts and dedups dependencies and fills in dependants.
func (g *Graph) link() {
	for i, s := range g.steps {
		slices.Sort(s.deps)
		s.deps = slices.Compact(s.deps)
		for _, d := range s.deps {
			g.steps[d].dependants = append(g.steps[d].dependants, i)
		}
	}
}

// cycles finds cycles among the dependencies, each as the steps along it
// in the direction data flows, starting from its first step in plan order.
func (g *Graph) cycles() [][]int {
	const (
		unseen = iota
		open
		closed
	)
	state := make([]int, len(g.steps))
	var stack []int
	var found [][]int
	var visit func(i int)
	visit = func(i int) {
		state[i] = open
		stack = append(stack, i)
		for _, d := range g.steps[i].dependants {
			switch state[d] {
			case unseen:
				visit(d)
			case open:
				c := slices.Clone(stack[slices.Index(stack, d):])
				m := slices.Index(c, slices.Min(c))
				found = append(found, append(c[m:], c[:m]...))
			}
		}
		stack = stack[:len(stack)-1]
		state[i] = closed
	}
	for i := range g.steps {
		if state[i] == unseen {
			visit(i)
		}
	}
	return found
}

// cycleText writes a cycle as a -> b -> c -> a.
func (g *Graph) cycleText(c []int) string {
	ids := make([]string, 0, len(c)+1)
	for _, i := range c {
		ids = append(ids, g.steps[i].id)
	}
	return strings.Join(append(ids, ids[0]), " -> ")
}

// shape computes the waves and the strategy of an acyclic graph.
func (g *Graph) shape() ([][]string, Strategy) {
	wave := make([]int, len(g.steps)) // 1 + the step's level; 0 until known
	var waveOf func(i int) int
	waveOf = func(i int) int {
		if wave[i] == 0 {
			wave[i] = 1
			for _, d := range g.steps[i].deps {
				wave[i] = max(wave[i], waveOf(d)+1)
			}
		}
		return wave[i]
	}
	var waves [][]string
	edges := false
	for i, s := range g.steps {
		w := waveOf(i)
		for len(waves) < w {
			waves = append(waves, nil)
		}
		waves[w-1] = append(waves[w-1], s.id)
		edges = edges || len(s.deps) > 0
	}
	switch {
	case len(g.steps) == 0:
		return [][]string{}, NoTool
	case len(g.steps) == 1:
		return waves, SingleTool
	case !edges:
		return waves, ParallelTools
	case len(waves) == len(g.steps):
		return waves, SequentialTools
	}
	return waves, HybridTools
}
