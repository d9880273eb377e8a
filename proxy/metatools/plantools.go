package metatools

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/mcp-router/mcp-router/planner"
	"github.com/mcp-router/mcp-router/routing"
)

const maxPlanTools = 64

// planTools reads plan's optional "tools": a string names a catalog tool,
// an object {"name", "description", "input_schema"} a client's own tool
// for a plan the client runs. Each is scored for query as the router
// scores; their text counts against the context bound.
func (t *Tools) planTools(query string, v any) ([]planner.Tool, error) {
	if v == nil {
		return nil, nil
	}
	list, ok := v.([]any)
	if !ok {
		return nil, errors.New(`"tools" must be a list of tool names or {"name", "description", "input_schema"} objects`)
	}
	if len(list) > maxPlanTools {
		return nil, fmt.Errorf(`"tools" lists %d tools, more than the limit of %d`, len(list), maxPlanTools)
	}
	if b, _ := json.Marshal(list); len(b) > t.opts.Inputs.MaxContextBytes {
		return nil, fmt.Errorf(`"tools" is %d bytes, more than the limit of %d: shorten it`, len(b), t.opts.Inputs.MaxContextBytes)
	}
	var out []planner.Tool
	for i, e := range list {
		pt, err := t.planTool(e)
		if err != nil {
			return nil, fmt.Errorf(`"tools"[%d]: %w`, i, err)
		}
		if !slices.ContainsFunc(out, func(o planner.Tool) bool { return o.Name == pt.Name }) {
			out = append(out, pt)
		}
	}
	scoreFor(query, out)
	return out, nil
}

// namedTools are the catalog tool names in plan's "tools".
func namedTools(v any) []string {
	list, _ := v.([]any)
	var out []string
	for _, e := range list[:min(len(list), maxPlanTools)] {
		if name, ok := e.(string); ok {
			out = append(out, name)
		}
	}
	return out
}

func (t *Tools) planTool(e any) (planner.Tool, error) {
	if name, ok := e.(string); ok {
		ct, ok := t.opts.Catalog.Tool(name)
		if !ok {
			return planner.Tool{}, fmt.Errorf("%q is not a catalog tool (describe a tool of your own as an object)", name)
		}
		return planner.Tool{Name: ct.Name, Description: ct.Def.Description, InputSchema: ct.Def.RawInputSchema, OutputSchema: ct.Def.RawOutputSchema}, nil
	}
	m, ok := e.(map[string]any)
	if !ok {
		return planner.Tool{}, errors.New("want a tool name or an object")
	}
	name, _ := m["name"].(string)
	desc, _ := m["description"].(string)
	if name == "" || len(name) > 128 {
		return planner.Tool{}, errors.New(`"name" must be a tool name of 1 to 128 bytes`)
	}
	if _, ok := t.opts.Catalog.Tool(name); ok || IsOwn(name) {
		return planner.Tool{}, fmt.Errorf("%q is a gateway tool: name it as a string", name)
	}
	schema := m["input_schema"]
	if schema == nil {
		schema = m["inputSchema"]
	}
	own := planner.Tool{Name: name, Description: desc, Own: true}
	if schema != nil {
		if _, ok := schema.(map[string]any); !ok {
			return planner.Tool{}, fmt.Errorf("%q: the input schema must be an object", name)
		}
		own.InputSchema, _ = json.Marshal(schema)
	}
	return own, nil
}

// scoreFor sets each tool's calibrated lexical score for query.
func scoreFor(query string, tools []planner.Tool) {
	if len(tools) == 0 {
		return
	}
	ix := routing.NewIndex(routing.IndexOptions{})
	docs := make([]routing.Tool, len(tools))
	for i, t := range tools {
		docs[i] = routing.Tool{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema}
	}
	ix.SetUpstream("plan", docs)
	for _, h := range ix.Search(query, 0) {
		if i := slices.IndexFunc(tools, func(t planner.Tool) bool { return t.Name == h.Name }); i >= 0 {
			tools[i].Score = h.Score
		}
	}
}
