package planner

import (
	"bytes"
	"encoding/json"
	"strings"
	"time"

	"github.com/mcp-router/mcp-router/internal/clip"
)

// maxDescription bounds a tool's description in the prompt: small models
// have small context windows, and the schema carries the details.
const maxDescription = 400

// promptData is what the template sees.
type promptData struct {
	Query, Context string
	Tools          []promptTool
	Now            time.Time
}

type promptTool struct {
	Name, Description string
	Schema            string // compact JSON
	Output            string // compact JSON; empty when the tool declares no output schema
}

// render executes the template: the top level is the system message, the
// "user" block the user message (the query when there is no such block).
func (p *Planner) render(req Request) (system, user string, err error) {
	data := promptData{Query: strings.TrimSpace(req.Query), Context: strings.TrimSpace(req.Context), Now: p.now()}
	for _, t := range req.Tools {
		data.Tools = append(data.Tools, promptTool{
			Name:        t.Name,
			Description: clip.Ellipsis(strings.Join(strings.Fields(t.Description), " "), maxDescription),
			Schema:      compact(t.InputSchema),
		})
		if !isAbsent(t.OutputSchema) {
			data.Tools[len(data.Tools)-1].Output = compact(t.OutputSchema)
		}
	}
	var sys, usr strings.Builder
	if err := p.tmpl.Execute(&sys, data); err != nil {
		return "", "", err
	}
	if p.tmpl.Lookup("user") == nil {
		return strings.TrimSpace(sys.String()), data.Query, nil
	}
	if err := p.tmpl.ExecuteTemplate(&usr, "user", data); err != nil {
		return "", "", err
	}
	return strings.TrimSpace(sys.String()), strings.TrimSpace(usr.String()), nil
}

// compact returns raw as one line of JSON; {} when raw is absent or not
// JSON.
func compact(raw json.RawMessage) string {
	var b bytes.Buffer
	if isAbsent(raw) || json.Compact(&b, raw) != nil {
		return "{}"
	}
	return b.String()
}
