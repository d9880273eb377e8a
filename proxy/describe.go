package proxy

// Compact signatures and full schemas on demand: request_more_tools shows
// each tool as a signature (name, required parameters, one-line
// description); describe_tools, and the error of a call whose arguments
// were wrong, give the full input schema.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
)

const describeToolsName = "describe_tools"

// maxDescribed bounds the tools one describe_tools call names.
const maxDescribed = 20

// maxSignatureDesc bounds the description in a signature, in bytes.
const maxSignatureDesc = 160

// maxSignatureServer bounds the server description beside a signature
// (what tells instances of one server apart), in bytes.
const maxSignatureServer = 100

// describeToolsDef gives the full definitions of catalog tools.
var describeToolsDef = mcp.Tool{
	Name: describeToolsName,
	Description: "Give the full input schemas of catalog tools, by exact name. request_more_tools shows tools as short " +
		"signatures (required parameters only); call this when you need a tool's optional parameters or their formats.",
	RawInputSchema: json.RawMessage(fmt.Sprintf(`{"type":"object","properties":{`+
		`"tools":{"type":"array","items":{"type":"string"},"maxItems":%d,"description":"Exact tool names, e.g. ['calculator_add']."}`+
		`},"required":["tools"]}`, maxDescribed)),
	Annotations: mcp.ToolAnnotation{
		Title:        "Describe tools",
		ReadOnlyHint: mcp.ToBoolPtr(true), DestructiveHint: mcp.ToBoolPtr(false),
		IdempotentHint: mcp.ToBoolPtr(true), OpenWorldHint: mcp.ToBoolPtr(false),
	},
}

// describedTool is one tool in describe_tools' result.
type describedTool struct {
	Name         string          `json:"name"`
	Upstream     string          `json:"upstream"`
	Domain       string          `json:"domain"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"input_schema"`
	OutputSchema json.RawMessage `json:"output_schema,omitempty"`
	Server       string          `json:"server_description,omitempty"`
}

func (s *Server) describeTools(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	names, err := toolNames(req.GetArguments()["tools"])
	if err != nil {
		return mcp.NewToolResultError("describe_tools: " + err.Error()), nil
	}
	missing := s.hub.awaitNames(ctx, names) // a tool of an upstream still starting is waited for
	c := s.hub.Catalog()
	var tools []describedTool
	var unknown []string
	var unavailable []map[string]any
	var b strings.Builder
	for _, name := range names {
		t, ok := c.Tool(name)
		if i := slices.IndexFunc(missing, func(e *UpstreamError) bool { return e.Tool == name }); !ok && i >= 0 {
			e := missing[i]
			unavailable = append(unavailable, map[string]any{"tool": name, "upstream": e.Upstream, "kind": string(e.Kind), "message": e.Err.Error()})
			fmt.Fprintf(&b, "- %s (server %s): %s: %v\n", name, e.Upstream, e.Kind, e.Err)
			continue
		}
		if !ok {
			unknown = append(unknown, name)
			continue
		}
		d := describedTool{Name: t.Name, Upstream: t.Upstream, Domain: t.Domain, Description: t.Def.Description,
			InputSchema: t.Def.RawInputSchema, OutputSchema: t.Def.RawOutputSchema, Server: t.Server}
		tools = append(tools, d)
		b.WriteString(fullText(d.Name, d.Upstream, d.Server, d.Description, d.InputSchema))
	}
	if len(unknown) > 0 {
		fmt.Fprintf(&b, "\nNot in the catalog: %s. Find tools with request_more_tools.\n", strings.Join(unknown, ", "))
	}
	res := mcp.NewToolResultText(strings.TrimSpace(b.String()))
	if len(tools) == 0 {
		res.IsError = true
	}
	structured := map[string]any{"tools": nonNil(tools), "unknown": nonNil(unknown)}
	res.StructuredContent = structured
	if len(unavailable) > 0 {
		structured["unavailable"] = unavailable
		s.noteOutage(ctx)
	}
	return res, nil
}

// toolNames reads describe_tools' "tools": 1 to maxDescribed names, each a
// valid tool name; duplicates are dropped.
func toolNames(v any) ([]string, error) {
	list, ok := v.([]any)
	if !ok || len(list) == 0 {
		return nil, errors.New(`"tools" must be a list of exact tool names, e.g. ["calculator_add"]`)
	}
	if len(list) > maxDescribed {
		return nil, fmt.Errorf(`"tools" names %d tools; at most %d at a time`, len(list), maxDescribed)
	}
	var names []string
	for _, item := range list {
		name, ok := item.(string)
		if !ok || !namePattern.MatchString(name) {
			return nil, fmt.Errorf(`"tools" holds %s, not a tool name (letters, digits, _ . -, at most 64)`, truncateUTF8(fmt.Sprint(item), 80))
		}
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	return names, nil
}

// fullText is a tool with its whole input schema, as describe_tools and a
// refused call show it.
func fullText(name, upstream, server, desc string, schema json.RawMessage) string {
	return fmt.Sprintf("- %s (server %s%s): %s\n  input schema: %s\n", name, upstream, aboutServer(server),
		oneLine(desc), compactJSON(schema))
}

// toolSignature is a tool's compact form: its name and required parameters
// with their types, and how many optional ones it has besides.
func toolSignature(name string, schema json.RawMessage) string {
	var s struct {
		Properties map[string]struct {
			Type any `json:"type"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	_ = json.Unmarshal(schema, &s) // an unreadable schema shows no parameters
	params := make([]string, 0, len(s.Required))
	for _, p := range s.Required {
		if typ := typeName(s.Properties[p].Type); typ != "" {
			params = append(params, p+": "+typ)
		} else {
			params = append(params, p)
		}
	}
	optional := 0
	for p := range s.Properties {
		if !slices.Contains(s.Required, p) {
			optional++
		}
	}
	if optional > 0 {
		params = append(params, fmt.Sprintf("+%d optional", optional))
	}
	return name + "(" + strings.Join(params, ", ") + ")"
}

// typeName is a JSON schema type as a signature shows it.
func typeName(t any) string {
	switch v := t.(type) {
	case string:
		return v
	case []any:
		parts := make([]string, 0, len(v))
		for _, p := range v {
			parts = append(parts, fmt.Sprint(p))
		}
		return strings.Join(parts, "|")
	}
	return ""
}

// firstSentence is the start of a description, on one line, up to its
// first sentence's end and at most maxSignatureDesc bytes.
func firstSentence(desc string) string {
	d := oneLine(desc)
	if i := strings.Index(d, ". "); i >= 0 {
		d = d[:i+1]
	}
	return truncateUTF8(d, maxSignatureDesc)
}

// withSchema adds the full input schema of the tool called to the error
// result of a call whose arguments were wrong (refused by validation, or
// by the upstream as invalid params), so the model can fix them.
func (s *Server) withSchema(res *mcp.CallToolResult, name string, err error) *mcp.CallToolResult {
	if !errors.Is(err, ErrInvalidArguments) && !errors.Is(err, mcp.ErrInvalidParams) {
		return res
	}
	t, ok := s.hub.Catalog().Tool(name)
	if !ok {
		return res
	}
	res.Content = append(res.Content, mcp.NewTextContent("The tool's definition:\n"+
		fullText(t.Name, t.Upstream, t.Server, t.Def.Description, t.Def.RawInputSchema)))
	return res
}
