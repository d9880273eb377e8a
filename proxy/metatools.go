package proxy

import (
	"context"
	"slices"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// metaTool is one of the gateway's own tools: its definition, its handler
// and when a server shows it.
type metaTool struct {
	def     mcp.Tool
	handler func(s *Server, ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error)
	// enabled says whether s shows the tool; nil means always.
	enabled func(s *Server) bool
}

// metaTools is the one list of the gateway's own tools: the names
// reserved against upstream tools (ownTools, ReservedNames, isOwnTool) and
// the tools a server registers (ownServerTools) all come from it. Its
// order is the order of registration. It is filled in init because the
// handlers themselves ask isOwnTool, which reads the list.
var metaTools []metaTool

// ownTools are the names of the meta-tools, reserved against upstream
// names whether or not a server shows them.
var ownTools []string

func init() {
	metaTools = []metaTool{
		{def: callToolDef, handler: (*Server).callTool},
		{def: runPlanDef, handler: (*Server).runPlan},
		{def: planDef, handler: (*Server).plan, enabled: func(s *Server) bool { return s.planner != nil }},
		{def: feedbackDef, handler: (*Server).routingFeedback, enabled: func(s *Server) bool { return s.lessons != nil }},
		{def: requestMoreToolsDef, handler: (*Server).requestMoreTools, enabled: routes},
		{def: describeToolsDef, handler: (*Server).describeTools, enabled: routes},
	}
	for _, m := range metaTools {
		ownTools = append(ownTools, m.def.Name)
	}
}

// routes reports whether s routes: it has a router, and so belts.
func routes(s *Server) bool { return s.belts != nil }

// ReservedNames returns the tool names upstreams may not take.
func ReservedNames() []string { return append([]string(nil), ownTools...) }

// isOwnTool reports the proxy's own tools (call_tool, request_more_tools, ...).
func isOwnTool(name string) bool { return slices.Contains(ownTools, name) }

// ownServerTools are the meta-tools s shows, always loaded.
func (s *Server) ownServerTools() []server.ServerTool {
	var tools []server.ServerTool
	for _, m := range metaTools {
		if m.enabled != nil && !m.enabled(s) {
			continue
		}
		h := m.handler
		tools = append(tools, server.ServerTool{Tool: withHints(m.def, ownSearchHint, true),
			Handler: func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) { return h(s, ctx, req) }})
	}
	return tools
}
