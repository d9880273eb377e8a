package metatools

// request_more_tools shows each tool as a compact signature; describe_tools,
// and the error of a call with wrong arguments, give the full schema.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-router/mcp-router/internal/clip"
	"github.com/mcp-router/mcp-router/proxy/call"
)

// namePattern is what a tool name may be (Claude's limit).
var namePattern = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)

// maxDescribed bounds the tools one describe_tools call names.
const maxDescribed = 20

// maxSignatureDesc bounds the description in a signature, in bytes.
const maxSignatureDesc = 160

// maxSignatureServer bounds the server description beside a signature.
const maxSignatureServer = 100

// describeToolsDef gives the full definitions of catalog tools.
var describeToolsDef = mcp.Tool{
	Name: DescribeToolsName,
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

type describedTool struct {
	Name         string          `json:"name"`
	Upstream     string          `json:"upstream"`
	Domain       string          `json:"domain"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"input_schema"`
	OutputSchema json.RawMessage `json:"output_schema,omitempty"`
	Server       string          `json:"server_description,omitempty"`
}

func (t *Tools) describeTools(ctx context.Context, c *call.Call, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	names, err := toolNames(req.GetArguments()["tools"])
	if err != nil {
		return mcp.NewToolResultError("describe_tools: " + err.Error()), nil
	}
	missing := t.opts.Starts.Await(ctx, names) // a tool of an upstream still starting is waited for
	var tools []describedTool
	var unknown []string
	var unavailable []map[string]any
	var b strings.Builder
	for _, name := range names {
		tool, ok := t.opts.Catalog.Tool(name)
		if i := slices.IndexFunc(missing, func(m Missing) bool { return m.Tool == name }); !ok && i >= 0 {
			m := missing[i]
			unavailable = append(unavailable, map[string]any{"tool": name, "upstream": m.Upstream, "kind": m.Kind, "message": m.Cause.Error()})
			fmt.Fprintf(&b, "- %s (server %s): %s: %v\n", name, m.Upstream, m.Kind, m.Cause)
			continue
		}
		if !ok {
			unknown = append(unknown, name)
			continue
		}
		tools = append(tools, describedTool{Name: tool.Name, Upstream: tool.Upstream, Domain: tool.Domain, Description: tool.Def.Description,
			InputSchema: tool.Def.RawInputSchema, OutputSchema: tool.Def.RawOutputSchema, Server: tool.Server})
		b.WriteString(FullText(tool))
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
		t.NoteOutage(c)
	}
	return res, nil
}

// toolNames reads describe_tools' "tools": 1 to maxDescribed valid names, without duplicates.
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
			return nil, fmt.Errorf(`"tools" holds %s, not a tool name (letters, digits, _ . -, at most 64)`, clip.Ellipsis(fmt.Sprint(item), 80))
		}
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	return names, nil
}

// toolSignature is a tool's name with its required parameters and types,
// and how many optional ones it has.
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

// firstSentence is a description's first sentence on one line, cut.
func firstSentence(desc string) string {
	d := clip.OneLine(desc)
	if i := strings.Index(d, ". "); i >= 0 {
		d = d[:i+1]
	}
	return clip.Ellipsis(d, maxSignatureDesc)
}

// FullText is t with its whole input schema, as describe_tools shows it.
func FullText(t Tool) string {
	return fmt.Sprintf("- %s (server %s%s): %s\n  input schema: %s\n", t.Name, t.Upstream, aboutServer(t.Server),
		clip.OneLine(t.Def.Description), compactJSON(t.Def.RawInputSchema))
}
