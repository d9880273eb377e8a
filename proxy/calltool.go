package proxy

import (
	"context"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-router/mcp-router/proxy/call"
)

// callToolDef is the proxy's call_tool: it reaches any catalog tool by
// name, whether or not the client's tool list shows it (decision 1 in docs/design.md, call-through).
var callToolDef = mcp.NewTool("call_tool",
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

func (s *Server) callTool(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	args := req.GetArguments()
	name, _ := args["name"].(string)
	if name == "" {
		return mcp.NewToolResultError(`call_tool needs "name": the exact name of a catalog tool`), nil
	}
	if isOwnTool(name) {
		return mcp.NewToolResultError(fmt.Sprintf("call_tool cannot call the gateway's own tool %q; call it directly", name)), nil
	}
	inner, ok := args["arguments"]
	if !ok || inner == nil {
		inner = map[string]any{}
	}
	if _, isObject := inner.(map[string]any); !isObject {
		return mcp.NewToolResultError(fmt.Sprintf(`call_tool: "arguments" for %s must be an object`, name)), nil
	}
	var c *carried
	if stateless(ctx) && s.belts != nil {
		handle, err := handleArg(args)
		if err != nil {
			return mcp.NewToolResultError("call_tool: " + err.Error()), nil
		}
		if handle != "" {
			c = s.restore(ctx, handle)
			ctx = context.WithValue(ctx, carriedKey{}, c)
		}
	}
	call := call.New(ctx, name, inner)
	call.StartWaited = startWaited(req.Params.Meta)
	return s.withHandle(ctx, c, s.call(ctx, call, req.Params.Meta), false), nil
}

// startWaitedKey marks, in a rerouted call's _meta, a call that has
// already waited StartWait for its upstream.
const startWaitedKey = "mcp-router/start-waited"

// holdForStart is a tools/call hook for a tool name not registered yet
// whose prefix is that of an upstream still starting: it waits (up to
// StartWait) for the upstream, whose tools are registered before the
// wait ends. When the tool is still missing, the call is served as
// call_tool serves it, without a second wait, so that the client gets an
// isError result saying the upstream is starting (or down) instead of
// "unknown tool". A name that is nobody's is left to mcp-go (-32602).
func (s *Server) holdForStart(ctx context.Context, _ any, req *mcp.CallToolRequest) {
	name := req.Params.Name
	if isOwnTool(name) || s.mcp.GetTool(name) != nil {
		return
	}
	if s.hub.awaitTool(ctx, name, false) == nil {
		s.hub.settle() // a rebuild may be registering it: let it end
		return
	}
	inner := req.GetArguments()
	if inner == nil {
		inner = map[string]any{}
	}
	meta := &mcp.Meta{AdditionalFields: map[string]any{startWaitedKey: true}}
	if m := req.Params.Meta; m != nil {
		meta.ProgressToken = m.ProgressToken
	}
	req.Params.Name, req.Params.Arguments, req.Params.RawArguments = callToolName, map[string]any{"name": name, "arguments": inner}, nil
	req.Params.Meta = meta
}

// startWaited reports, for a call_tool request, that the call already
// waited for its upstream (holdForStart rerouted it).
func startWaited(meta *mcp.Meta) bool {
	return meta != nil && meta.AdditionalFields[startWaitedKey] == true
}
