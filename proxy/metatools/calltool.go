package metatools

import (
	"context"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-router/mcp-router/proxy/call"
)

// callToolDef reaches any catalog tool by name, listed or not (decision 1 in docs/design.md).
var callToolDef = mcp.NewTool(CallToolName,
	mcp.WithDescription("Call any tool of the gateway's catalog by its exact name, with its arguments. "+
		"Use it for tools named by request_more_tools or by an earlier result that are not in your tool list."),
	mcp.WithString("name", mcp.Required(), mcp.Description("Exact tool name, e.g. calculator_add.")),
	mcp.WithObject("arguments", mcp.Description("The tool's arguments, as its input schema describes.")),
	mcp.WithString("handle", mcp.Description("The handle of your latest request_more_tools or call_tool result, if it gave one.")),
	mcp.WithTitleAnnotation("Call a catalog tool"),
	mcp.WithOpenWorldHintAnnotation(true),
	mcp.WithDestructiveHintAnnotation(true),
	mcp.WithReadOnlyHintAnnotation(false),
)

func (t *Tools) callTool(ctx context.Context, c *call.Call, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	args := req.GetArguments()
	name, inner, bad := callToolArgs(args)
	if bad != nil {
		return bad, nil
	}
	if t.internal(name) {
		return internalError("call_tool", name), nil
	}
	if c.Era == call.Stateless && t.belts != nil {
		handle, err := handleArg(args)
		if err != nil {
			return mcp.NewToolResultError("call_tool: " + err.Error()), nil
		}
		if handle != "" {
			c.Carried = t.restore(c, handle)
		}
	}
	target := *c
	target.Tool, target.Args = name, inner
	res, err := t.opts.Caller.Call(ctx, &target)
	if err != nil {
		res = t.opts.ErrorResult(err)
	}
	return t.withHandle(c, res, false), nil
}

// callToolArgs reads call_tool's "name" and "arguments" ({} when absent),
// or returns the error result.
func callToolArgs(args map[string]any) (name string, inner any, bad *mcp.CallToolResult) {
	name, _ = args["name"].(string)
	if name == "" {
		return "", nil, mcp.NewToolResultError(`call_tool needs "name": the exact name of a catalog tool`)
	}
	if IsOwn(name) {
		return "", nil, mcp.NewToolResultError(fmt.Sprintf("call_tool cannot call the gateway's own tool %q; call it directly", name))
	}
	inner, ok := args["arguments"]
	if !ok || inner == nil {
		inner = map[string]any{}
	}
	if _, isObject := inner.(map[string]any); !isObject {
		return "", nil, mcp.NewToolResultError(fmt.Sprintf(`call_tool: "arguments" for %s must be an object`, name))
	}
	return name, inner, nil
}
