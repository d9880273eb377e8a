package metatools

import (
	"strings"
	"testing"

	"github.com/mcp-router/mcp-router/executor"
	"github.com/mcp-router/mcp-router/proxy/call"
	"github.com/mcp-router/mcp-router/routing"
)

// TestInternalToolIsNotTheModels: with require_user_facing (the default
// policy) a tool listed in internal_tools means what seed 000 says
// everywhere: request_more_tools never hands it over or names it,
// describe_tools does not describe it, call_tool and run_plan do not
// call it, routing_feedback does not learn about it.
func TestInternalToolIsNotTheModels(t *testing.T) {
	h := newFakeHub()
	policy := routing.DefaultFusePolicy()
	policy.InternalTools = []string{"files_read"}
	r := routing.NewRouter(routing.RouterOptions{Fuse: &policy})
	var docs []routing.Tool
	for _, tool := range h.tools {
		docs = append(docs, routing.Tool{Name: tool.Name, Upstream: tool.Upstream, Domain: tool.Domain, Description: tool.Def.Description})
	}
	r.SetUpstream("all", docs)
	tools := New(Options{Catalog: h, Caller: h, Starts: h, Upstreams: h, Router: r, HandleKey: randomKey(t), Decisions: h,
		Executor: executor.New(executor.Options{Caller: h})})
	c := &call.Call{Session: "a"}

	found, _ := handler(t, tools, RequestMoreToolsName)(t.Context(), c, request(map[string]any{"query": "read a text file from disk"}))
	if strings.Contains(text(found), "files_read") {
		t.Errorf("request_more_tools: %s, want files_read neither handed over nor named", text(found))
	}
	described, _ := handler(t, tools, DescribeToolsName)(t.Context(), c, request(map[string]any{"tools": []any{"files_read"}}))
	if !described.IsError || !strings.Contains(text(described), "Not in the catalog") {
		t.Errorf("describe_tools: %s, want files_read not described", text(described))
	}
	called, _ := handler(t, tools, CallToolName)(t.Context(), c, request(map[string]any{"name": "files_read"}))
	if !called.IsError || !strings.Contains(text(called), "internal") {
		t.Errorf("call_tool: %s, want a refusal naming it internal", text(called))
	}
	plan := map[string]any{"steps": []any{map[string]any{"id": "a", "tool": "files_read", "args": map[string]any{}}}}
	ran, _ := handler(t, tools, RunPlanName)(t.Context(), c, request(plan))
	if !ran.IsError || !strings.Contains(text(ran), "internal") {
		t.Errorf("run_plan: %s, want a refusal naming it internal", text(ran))
	}
	if len(h.calls) != 0 {
		t.Errorf("calls %+v, want none", h.calls)
	}
	// A user-facing tool is unchanged.
	if res, _ := handler(t, tools, CallToolName)(t.Context(), c, request(map[string]any{"name": "calc_add"})); res.IsError {
		t.Errorf("call_tool calc_add: %s", text(res))
	}
}
