package fakeupstream

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// KindEnvVar, set to "apps" beside EnvVar, makes MaybeRun serve Apps
// instead of New.
const KindEnvVar = "MCP_ROUTER_FAKE_KIND"

// AppsCommand is Command for a stdio child that serves Apps(name).
func AppsCommand(name string) (command string, env map[string]string) {
	cmd, env := Command(name)
	env[KindEnvVar] = "apps"
	return cmd, env
}

// serverOf is the fake MaybeRun serves: New, or Apps when KindEnvVar
// says so.
func serverOf(name string) *server.MCPServer {
	if os.Getenv(KindEnvVar) == "apps" {
		return Apps(name)
	}
	return New(name)
}

// AppHTML is the view every Apps server serves at ui://widget, with its
// name in it.
func AppHTML(name string) string {
	return fmt.Sprintf("<!DOCTYPE html><html><body><h1>widget of %s</h1></body></html>", name)
}

// AppCSP is the _meta of that view: a CSP and permissions that name the
// server, so a reader can tell whose it got.
func AppCSP(name string) map[string]any {
	return map[string]any{"ui": map[string]any{
		"csp":           map[string]any{"connectDomains": []any{"https://api." + name + ".example"}},
		"permissions":   map[string]any{"clipboardWrite": map[string]any{}},
		"prefersBorder": true,
	}}
}

// Apps builds a fake server with an MCP Apps interface, the same on
// every server whatever its name, as two real servers' can be: show {}
// for the model and the app, whose view is ui://widget (named by
// _meta.ui.resourceUri and the deprecated _meta["ui/resourceUri"]);
// refresh {} for the app only, whose view is ui://settings; and both
// views as resources, whose HTML (AppHTML) and _meta (AppCSP, on the
// listing and on the contents) name the server; touch {} tells the
// client ui://widget changed and says which URIs it was asked to follow
// (resources/subscribe). As the specification
// says a server should, it offers its tools' views only to a client that
// declares the extension (capabilities.extensions
// "io.modelcontextprotocol/ui"): to others its tools have no _meta.
func Apps(name string) *server.MCPServer {
	var mu sync.Mutex
	var subscribed []string
	hooks := &server.Hooks{}
	hooks.AddAfterSubscribe(func(_ context.Context, _ any, req *mcp.SubscribeRequest, _ *mcp.EmptyResult) {
		mu.Lock()
		defer mu.Unlock()
		subscribed = append(subscribed, req.Params.URI)
	})
	s := server.NewMCPServer(name, "1.0.0", server.WithToolCapabilities(true), server.WithResourceCapabilities(true, true),
		server.WithToolFilter(textOnlyUnlessApps), server.WithHooks(hooks))
	s.AddTool(mcp.NewTool("touch", mcp.WithDescription("Tell the client ui://widget changed; say what was subscribed")),
		func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			err := server.ServerFromContext(ctx).SendNotificationToClient(ctx, string(mcp.MethodNotificationResourceUpdated),
				map[string]any{"uri": "ui://widget"})
			mu.Lock()
			defer mu.Unlock()
			return mcp.NewToolResultText(strings.Join(subscribed, " ")), err
		})
	for _, t := range []struct{ tool, view, vis string }{{"show", "ui://widget", "model"}, {"refresh", "ui://settings", "app"}} {
		tool := mcp.NewTool(t.tool, mcp.WithDescription("The "+t.tool+" tool of "+name))
		vis := []any{"app"}
		if t.vis == "model" {
			vis = []any{"model", "app"}
		}
		tool.Meta = mcp.NewMetaFromMap(map[string]any{"ui": map[string]any{"resourceUri": t.view, "visibility": vis}, "ui/resourceUri": t.view})
		s.AddTool(tool, func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText(t.tool + " of " + name), nil
		})
		res := mcp.NewResource(t.view, t.view+" of "+name, mcp.WithMIMEType("text/html;profile=mcp-app"))
		res.Meta = mcp.NewMetaFromMap(AppCSP(name))
		s.AddResource(res, func(_ context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			return []mcp.ResourceContents{mcp.TextResourceContents{URI: req.Params.URI, MIMEType: "text/html;profile=mcp-app",
				Text: AppHTML(name) + "<!-- " + t.view + " -->", Meta: AppCSP(name)}}, nil
		})
	}
	return s
}

// textOnlyUnlessApps strips the _meta of tools for a client that does not
// declare the MCP Apps extension.
func textOnlyUnlessApps(ctx context.Context, tools []mcp.Tool) []mcp.Tool {
	if s, ok := server.ClientSessionFromContext(ctx).(server.SessionWithClientInfo); ok {
		if _, apps := s.GetClientCapabilities().Extensions["io.modelcontextprotocol/ui"]; apps {
			return tools
		}
	}
	out := make([]mcp.Tool, len(tools))
	for i, t := range tools {
		t.Meta = nil
		out[i] = t
	}
	return out
}
