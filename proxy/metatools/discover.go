package metatools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-router/mcp-router/internal/clip"
	"github.com/mcp-router/mcp-router/proxy/call"
	"github.com/mcp-router/mcp-router/routing"
	"github.com/mcp-router/mcp-router/routing/fuse"
)

// requestMoreToolsDef is the discovery tool (decision 1 in docs/design.md).
var requestMoreToolsDef = mcp.Tool{
	Name: RequestMoreToolsName,
	Description: "Find tools for a task when none of your tools fits. Describe the task in words (\"query\"); " +
		"optionally name tools you believe exist (\"tools\"), add the words a matching tool's name or description " +
		"would use (\"keywords\", e.g. \"read file contents\"), and restate the task as one plain sentence without " +
		"names, values or pasted data (\"intent\"). The best-matching tools are added to your tool list " +
		"and returned here as signatures (required parameters; describe_tools gives full schemas), so you can call " +
		"them directly or with call_tool even if your tool list does not refresh. Read any routing alert before calling.",
	RawInputSchema: json.RawMessage(`{"type":"object","properties":{` +
		`"query":{"type":"string","description":"What you need to do, in words, e.g. 'read a file from disk' or 'convert 5 km to miles'."},` +
		`"tools":{"type":"array","items":{"type":"string"},"description":"Exact tool names you believe you need, if any."},` +
		`"keywords":{"type":"array","items":{"type":"string"},"description":"Words a matching tool's name or description would use: an action and its object, e.g. ['read', 'file']."},` +
		`"intent":{"type":"string","description":"The task as one plain sentence, without names, values or pasted data, e.g. 'Read a text file from disk.'"},` +
		`"route":{"type":"string","enum":["SIMPLE_TOOL","COMPLEX_TOOL","GENERAL_CHAT","EXIT"],"description":"SIMPLE_TOOL when one tool will do, COMPLEX_TOOL when several are needed."},` +
		`"top_k":{"type":"integer","minimum":1,"maximum":50,"description":"How many of the best-ranked tools to consider (default 5); \"topk\" is accepted too."},` +
		`"handle":{"type":"string","description":"The handle of your latest request_more_tools or call_tool result, if it gave one."}` +
		`},"required":["query"]}`),
	Annotations: mcp.ToolAnnotation{
		Title:        "Find more tools",
		ReadOnlyHint: mcp.ToBoolPtr(true), DestructiveHint: mcp.ToBoolPtr(false),
		IdempotentHint: mcp.ToBoolPtr(false), OpenWorldHint: mcp.ToBoolPtr(false),
	},
}

type routedTool struct {
	Name        string          `json:"name"`
	Upstream    string          `json:"upstream"`
	Domain      string          `json:"domain"`
	Score       float64         `json:"score"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
	// Signature is the tool's name with its required parameters.
	Signature string `json:"signature"`
	// Unavailable is "down" or "starting" for a tool of an upstream not connected.
	Unavailable string `json:"unavailable,omitempty"`
	// Server is what the tool's upstream is for, as configured.
	Server string `json:"server_description,omitempty"`
	// Alternatives are the same tool on other instances of its server.
	Alternatives []alternative `json:"alternatives,omitempty"`
	line         *toolLine     // what the text shows of it
}

// alternative is the same tool on another instance of its server.
type alternative struct {
	Name     string `json:"name"`
	Upstream string `json:"upstream"`
	Server   string `json:"server_description,omitempty"`
}

func (t *Tools) requestMoreTools(ctx context.Context, c *call.Call, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	rreq, res := t.discoveryRequest(c, req.GetArguments())
	if res != nil {
		return res, nil
	}
	t.opts.Starts.Settle() // a catalog just stored is indexed too: discovery sees what describe_tools sees
	sess, err := t.discoverySession(c, req.GetArguments())
	if err != nil {
		return mcp.NewToolResultError("request_more_tools: " + err.Error()), nil
	}
	ups := t.opts.Upstreams.Upstreams()
	if t.awaitStarting(ctx, c, sess, rreq, ups) {
		ups = t.opts.Upstreams.Upstreams() // those waited for have connected, or not
	}
	d, err := t.opts.Decisions.Discover(ctx, sess, rreq)
	if errors.Is(err, routing.ErrBreakerOpen) {
		t.opts.Logger.Warn("discovery refused: breaker open", "session_id", call.SessionTag(c.Session), "discoveries", d.Breaker.Discoveries)
		return t.withHandle(c, breakerResult(d), true), nil
	}
	t.discovered(ctx, c, d)
	outs, outageAlerts := findOutages(ups, rreq, d)
	if len(outs) > 0 {
		t.NoteOutage(c)
		t.opts.Logger.Info("routing met an outage", "session_id", call.SessionTag(c.Session), "upstreams", len(outs))
	}
	return t.withHandle(c, t.discoveryResult(d, outs, outageAlerts), true), nil
}

// discovered counts a discovery, tells the client of a belt change and logs routing collisions.
func (t *Tools) discovered(ctx context.Context, c *call.Call, d routing.Discovery) {
	if m := t.opts.Metrics; m != nil {
		m.Discovery(len(d.Added), len(d.Evicted))
		if d.Breaker.Open {
			m.BreakerTrip()
		}
	}
	if c.Carried == nil {
		t.ReportBelts()
	}
	if (d.Changed() || d.Breaker.Open) && t.opts.Client != nil {
		t.opts.Client.ToolsChanged(ctx, c)
	}
	for _, a := range d.Alerts {
		if a.Kind == "collision" {
			t.opts.Logger.Info("routing collision", "session_id", call.SessionTag(c.Session), "tools", a.Tools, "domains", a.Domains)
		}
	}
}

// discoveryRequest reads request_more_tools' arguments, or returns the error result.
func (t *Tools) discoveryRequest(c *call.Call, args map[string]any) (routing.Request, *mcp.CallToolResult) {
	query, _ := args["query"].(string)
	if res := tooLong(RequestMoreToolsName, "query", query, t.opts.Inputs.MaxQueryBytes); res != nil {
		return routing.Request{}, res
	}
	needs, err := fuse.NeedsFromAny(args["tools"])
	if err != nil {
		return routing.Request{}, mcp.NewToolResultError(`request_more_tools: "tools" must be a list of tool names: ` + err.Error())
	}
	route, err := fuse.ParseRoute(fmt.Sprint(orEmpty(args["route"])))
	if err != nil {
		return routing.Request{}, mcp.NewToolResultError(`request_more_tools: "route" must be SIMPLE_TOOL, COMPLEX_TOOL, GENERAL_CHAT or EXIT`)
	}
	keywords, intent, err := keywordsAndIntent(args)
	if err != nil {
		return routing.Request{}, mcp.NewToolResultError("request_more_tools: " + err.Error())
	}
	topK, err := topKArg(args)
	if err != nil {
		return routing.Request{}, mcp.NewToolResultError("request_more_tools: " + err.Error())
	}
	if strings.TrimSpace(query) == "" && len(needs) == 0 {
		return routing.Request{}, mcp.NewToolResultError(`request_more_tools needs "query": describe the task in words`)
	}
	return routing.Request{Principal: c.Who(), Query: query, Keywords: keywords, Intent: intent, Needs: needs, Route: route,
		Exclude: IsOwn, TopK: topK, Core: func(name string) bool { return slices.Contains(t.belts.core, name) }}, nil
}

// discoverySession is c's session, or on the stateless protocol one
// restored from the handle passed (kept in c.Carried).
func (t *Tools) discoverySession(c *call.Call, args map[string]any) (*routing.Session, error) {
	if c.Era != call.Stateless {
		return t.belts.session(c), nil
	}
	handle, err := handleArg(args)
	if err != nil {
		return nil, err
	}
	c.Carried = t.restore(c, handle)
	return c.Carried.Session, nil
}

// maxHint bounds request_more_tools' "keywords" and "intent", in bytes.
const maxHint = 1024

// keywordsAndIntent reads the optional "keywords" (words, or one string) and "intent".
func keywordsAndIntent(args map[string]any) (keywords, intent string, err error) {
	switch v := args["keywords"].(type) {
	case nil:
	case string:
		keywords = v
	case []any:
		words := make([]string, 0, len(v))
		for _, w := range v {
			s, ok := w.(string)
			if !ok {
				return "", "", errors.New(`"keywords" must be a list of words`)
			}
			words = append(words, s)
		}
		keywords = strings.Join(words, " ")
	default:
		return "", "", errors.New(`"keywords" must be a list of words`)
	}
	switch v := args["intent"].(type) {
	case nil:
	case string:
		intent = v
	default:
		return "", "", errors.New(`"intent" must be a sentence (a string)`)
	}
	if len(keywords) > maxHint || len(intent) > maxHint {
		return "", "", fmt.Errorf(`"keywords" and "intent" must each be at most %d bytes`, maxHint)
	}
	return keywords, intent, nil
}

const maxTopK = 50

// topKArg reads the optional "top_k" (or legacy "topk"); 0 when absent.
func topKArg(args map[string]any) (int, error) {
	key, v := "top_k", args["top_k"]
	if v == nil {
		key, v = "topk", args["topk"]
	}
	if v == nil {
		return 0, nil
	}
	f, ok := v.(float64)
	if !ok || f != float64(int(f)) || f < 1 || f > maxTopK {
		return 0, fmt.Errorf("%q must be a whole number from 1 to %d, got %v", key, maxTopK, v)
	}
	return int(f), nil
}

func orEmpty(v any) any {
	if v == nil {
		return ""
	}
	return v
}

// breakerAlert is what the model reads when discovery is paused.
func breakerAlert(state fuse.BreakerState) routing.Alert {
	return routing.Alert{Kind: "breaker", Message: fmt.Sprintf(
		"Routing alert: request_more_tools is paused after %d searches without a successful tool call. "+
			"Use a tool you already have (directly or through call_tool with a name from an earlier result), "+
			"or tell the user the capability seems to be missing. Searching comes back after a successful tool call, or after a quiet spell without searching.",
		state.Max)}
}

func breakerResult(d routing.Discovery) *mcp.CallToolResult {
	a := breakerAlert(d.Breaker)
	res := mcp.NewToolResultError(a.Message)
	res.StructuredContent = map[string]any{"tools": []routedTool{}, "alerts": []routing.Alert{a}, "added": []string{}, "breaker": d.Breaker}
	return res
}

// discoveryResult renders a discovery as text and structuredContent:
// everything needed to call the tools through call_tool.
func (t *Tools) discoveryResult(d routing.Discovery, outs []outage, outageAlerts []routing.Alert) *mcp.CallToolResult {
	tools := make(routedTools, 0, len(d.Selected))
	for _, c := range d.Selected {
		tool, ok := t.opts.Catalog.Tool(c.Name)
		if !ok {
			continue
		}
		line := t.lines.of(c, tool)
		tools = append(tools, routedTool{Name: c.Name, Upstream: c.Upstream, Domain: c.Domain, Score: round2(c.Score),
			Description: tool.Def.Description, InputSchema: tool.Def.RawInputSchema, Signature: line.signature, Server: tool.Server,
			Alternatives: t.alternatives(c.Alternatives), Unavailable: unavailable(outs, c.Upstream), line: line})
	}
	standIns(tools, outs, t.opts.Router.Options().CrossDomain)
	alerts := withOutages(d.Alerts, outageAlerts)
	if d.Breaker.Open {
		alerts = append(alerts, breakerAlert(d.Breaker))
	}
	res := mcp.NewToolResultText(discoveryText(d.Query, alerts, tools, d.Unknown))
	res.StructuredContent = map[string]any{
		"tools": tools, "alerts": nonNil(alerts), "added": nonNil(d.Added), "evicted": nonNil(d.Evicted),
		"unknown": nonNil(d.Unknown), "breaker": d.Breaker, "outages": nonNil(outs), "abstained": d.Abstained,
	}
	return res
}

// discoveryText is the answer for the model: alerts, then signatures.
func discoveryText(query string, alerts []routing.Alert, tools []routedTool, unknown []string) string {
	var b strings.Builder
	b.Grow(textSize(query, alerts, tools))
	for _, a := range alerts {
		b.WriteString(a.Message)
		b.WriteString("\n\n")
	}
	if len(tools) > 0 {
		fmt.Fprintf(&b, "Tools for %q (call them directly, or with call_tool {\"name\": ..., \"arguments\": {...}}"+
			"; describe_tools {\"tools\": [...]} gives full input schemas):\n", query)
	}
	for _, t := range tools {
		unavailable := ""
		if t.Unavailable != "" {
			unavailable = ", " + t.Unavailable + " now"
		}
		fmt.Fprintf(&b, "- %s: %s (server %s%s%s, score %.2f)\n", t.Signature, t.line.sentence, t.Upstream, t.line.aboutIt, unavailable, t.Score)
		if len(t.Alternatives) > 0 {
			alts := make([]string, len(t.Alternatives))
			for i, a := range t.Alternatives {
				alts[i] = fmt.Sprintf("%s (server %s%s)", a.Name, a.Upstream, aboutServer(a.Server))
			}
			fmt.Fprintf(&b, "  the same tool on other instances of this server: %s\n", strings.Join(alts, "; "))
		}
	}
	if len(unknown) > 0 {
		fmt.Fprintf(&b, "\nNot in the catalog: %s.\n", strings.Join(unknown, ", "))
	}
	return strings.TrimSpace(b.String())
}

// textSize is about the bytes of discoveryText's answer, alternatives and
// unknown tools aside, for its builder to grow once.
func textSize(query string, alerts []routing.Alert, tools []routedTool) int {
	n := 160 + len(query)
	for _, a := range alerts {
		n += len(a.Message) + 2
	}
	for _, t := range tools {
		n += len(t.Signature) + len(t.line.sentence) + len(t.Upstream) + len(t.line.aboutIt) + 40
	}
	return n
}

// alternatives describes the catalog tools named, skipping any gone since.
func (t *Tools) alternatives(names []string) []alternative {
	var out []alternative
	for _, n := range names {
		if tool, ok := t.opts.Catalog.Tool(n); ok {
			out = append(out, alternative{Name: n, Upstream: tool.Upstream, Server: tool.Server})
		}
	}
	return out
}

// aboutServer is ": <description>" for a server with one, or "".
func aboutServer(desc string) string {
	if desc == "" {
		return ""
	}
	return ": " + clip.OneLine(desc)
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func round2(f float64) float64 { return float64(int(f*100+0.5)) / 100 }

func compactJSON(raw json.RawMessage) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	b, _ := json.Marshal(v)
	return string(b)
}
