package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-router/mcp-router/routing"
	"github.com/mcp-router/mcp-router/routing/fuse"
)

const (
	callToolName         = "call_tool"
	requestMoreToolsName = "request_more_tools"
)

// requestMoreToolsDef is the discovery tool (decision 1 in docs/design.md).
var requestMoreToolsDef = mcp.Tool{
	Name: requestMoreToolsName,
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

// routedTool is one tool in request_more_tools' result.
type routedTool struct {
	Name        string          `json:"name"`
	Upstream    string          `json:"upstream"`
	Domain      string          `json:"domain"`
	Score       float64         `json:"score"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
	// Signature is the tool's name with its required parameters.
	Signature string `json:"signature"`
	// Unavailable is "down" or "starting" for a tool of an upstream not
	// connected (from its last listing); empty when it can be called.
	Unavailable string `json:"unavailable,omitempty"`
	// Server is what the tool's upstream is for, as configured.
	Server string `json:"server_description,omitempty"`
	// Alternatives are the same tool on other instances of its server.
	Alternatives []alternative `json:"alternatives,omitempty"`
}

// alternative is the same tool on another instance of its server.
type alternative struct {
	Name     string `json:"name"`
	Upstream string `json:"upstream"`
	Server   string `json:"server_description,omitempty"`
}

func (s *Server) requestMoreTools(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	args := req.GetArguments()
	query, _ := args["query"].(string)
	if res := tooLong(requestMoreToolsName, "query", query, s.inputs.MaxQueryBytes); res != nil {
		return res, nil
	}
	needs, err := fuse.NeedsFromAny(args["tools"])
	if err != nil {
		return mcp.NewToolResultError(`request_more_tools: "tools" must be a list of tool names: ` + err.Error()), nil
	}
	route, err := fuse.ParseRoute(fmt.Sprint(orEmpty(args["route"])))
	if err != nil {
		return mcp.NewToolResultError(`request_more_tools: "route" must be SIMPLE_TOOL, COMPLEX_TOOL, GENERAL_CHAT or EXIT`), nil
	}
	keywords, intent, err := keywordsAndIntent(args)
	if err != nil {
		return mcp.NewToolResultError("request_more_tools: " + err.Error()), nil
	}
	topK, err := topKArg(args)
	if err != nil {
		return mcp.NewToolResultError("request_more_tools: " + err.Error()), nil
	}
	if strings.TrimSpace(query) == "" && len(needs) == 0 {
		return mcp.NewToolResultError(`request_more_tools needs "query": describe the task in words`), nil
	}
	s.hub.settle() // a catalog just stored is indexed too: discovery sees what describe_tools sees
	sess, c, err := s.discoverySession(ctx, args)
	if err != nil {
		return mcp.NewToolResultError("request_more_tools: " + err.Error()), nil
	}
	if c != nil {
		ctx = context.WithValue(ctx, carriedKey{}, c)
	}
	rreq := routing.Request{Principal: principalName(ctx), Query: query, Keywords: keywords, Intent: intent, Needs: needs, Route: route, Exclude: isOwnTool, TopK: topK,
		Core: func(name string) bool { return slices.Contains(s.belts.core, name) }}
	s.awaitStarting(ctx, sess, rreq)
	rctx, span := s.startRouteSpan(ctx, routeSpanDiscover)
	d, err := sess.Discover(rctx, rreq)
	endDiscoverySpan(span, d, err)
	if errors.Is(err, routing.ErrBreakerOpen) {
		s.logger.Warn("discovery refused: breaker open", "session_id", sessionTagOf(ctx), "discoveries", d.Breaker.Discoveries)
		return s.withHandle(ctx, c, breakerResult(d), true), nil
	}
	s.metrics.RouteDone(d.Took, len(d.Selected), alertKinds(d.Alerts))
	s.metrics.Discovery(len(d.Added), len(d.Evicted))
	if d.Breaker.Open {
		s.metrics.BreakerTrip()
	}
	if c == nil {
		s.reportBelts()
	}
	if d.Changed() || d.Breaker.Open {
		s.notifyToolsChanged(ctx)
	}
	for _, a := range d.Alerts {
		if a.Kind == "collision" {
			s.logger.Info("routing collision", "session_id", sessionTagOf(ctx), "tools", a.Tools, "domains", a.Domains)
		}
	}
	outs, outageAlerts := s.findOutages(d)
	if len(outs) > 0 {
		s.noteOutage(ctx)
		s.logger.Info("routing met an outage", "session_id", sessionTagOf(ctx), "upstreams", len(outs))
	}
	return s.withHandle(ctx, c, s.discoveryResult(d, outs, outageAlerts), true), nil
}

// discoverySession is the routing session a discovery runs in: the
// client's session, or, on the stateless protocol, one restored from the
// handle it passed (c, whose state the answer's handle carries on).
func (s *Server) discoverySession(ctx context.Context, args map[string]any) (*routing.Session, *carried, error) {
	if !stateless(ctx) {
		return s.belts.session(ctx), nil, nil
	}
	handle, err := handleArg(args)
	if err != nil {
		return nil, nil, err
	}
	c := s.restore(ctx, handle)
	return c.sess, c, nil
}

// handleArg reads the optional "handle" argument.
func handleArg(args map[string]any) (string, error) {
	switch v := args["handle"].(type) {
	case nil:
		return "", nil
	case string:
		return v, nil
	}
	return "", errors.New(`"handle" must be the string an earlier result gave`)
}

// withHandle gives res the handle of c's state, for a stateless client to
// pass back: in its text, its _meta and, for the proxy's own results, its
// structuredContent (a tool's own structuredContent is left as its output
// schema says). Without c it returns res as it is.
func (s *Server) withHandle(ctx context.Context, c *carried, res *mcp.CallToolResult, own bool) *mcp.CallToolResult {
	if c == nil {
		return res
	}
	h := s.mint(ctx, c)
	text := "handle: " + h + "\n(pass it back as \"handle\" to request_more_tools and call_tool: it carries this task's routing context)"
	if c.note != "" {
		text = c.note + "\n" + text
	}
	res.Content = append(res.Content, mcp.NewTextContent(text))
	if m, ok := res.StructuredContent.(map[string]any); ok && own {
		m["handle"] = h
	}
	if res.Meta == nil {
		res.Meta = &mcp.Meta{}
	}
	if res.Meta.AdditionalFields == nil {
		res.Meta.AdditionalFields = map[string]any{}
	}
	res.Meta.AdditionalFields[HandleMetaKey] = h
	return res
}

// maxHint bounds request_more_tools' "keywords" and "intent", in bytes.
const maxHint = 1024

// keywordsAndIntent reads request_more_tools' optional "keywords" (a list
// of words, or one string) and "intent" (a string).
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

// maxTopK bounds request_more_tools' "top_k".
const maxTopK = 50

// topKArg reads request_more_tools' optional "top_k" (or the legacy
// "topk"): a whole number from 1 to maxTopK; 0 when absent.
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

// discoveryResult renders a discovery for the model (text) and for
// programs (structuredContent): everything needed to call the tools
// through call_tool when the client does not refresh its list.
func (s *Server) discoveryResult(d routing.Discovery, outs []outage, outageAlerts []routing.Alert) *mcp.CallToolResult {
	tools := make([]routedTool, 0, len(d.Selected))
	for _, c := range d.Selected {
		t, ok := s.hub.Catalog().Tool(c.Name)
		if !ok {
			continue
		}
		tools = append(tools, routedTool{Name: c.Name, Upstream: c.Upstream, Domain: c.Domain, Score: round2(c.Score),
			Description: t.Def.Description, InputSchema: t.Def.RawInputSchema, Signature: toolSignature(c.Name, t.Def.RawInputSchema), Server: t.Server,
			Alternatives: s.alternatives(c.Alternatives), Unavailable: unavailable(outs, c.Upstream)})
	}
	alerts := withOutages(d.Alerts, outageAlerts)
	if d.Breaker.Open {
		alerts = append(alerts, breakerAlert(d.Breaker))
	}
	res := mcp.NewToolResultText(discoveryText(d.Query, alerts, tools, d.Unknown, false))
	res.StructuredContent = map[string]any{
		"tools": tools, "alerts": nonNil(alerts), "added": nonNil(d.Added), "evicted": nonNil(d.Evicted),
		"unknown": nonNil(d.Unknown), "breaker": d.Breaker, "outages": nonNil(outs), "abstained": d.Abstained,
	}
	return res
}

// discoveryText is request_more_tools' answer for the model: alerts, then
// each tool as a compact signature, or with its whole input schema when
// full is set (as describe_tools shows it).
func discoveryText(query string, alerts []routing.Alert, tools []routedTool, unknown []string, full bool) string {
	var b strings.Builder
	for _, a := range alerts {
		b.WriteString(a.Message + "\n\n")
	}
	if len(tools) > 0 {
		fmt.Fprintf(&b, "Tools for %q (call them directly, or with call_tool {\"name\": ..., \"arguments\": {...}}", query)
		if !full {
			b.WriteString("; describe_tools {\"tools\": [...]} gives full input schemas")
		}
		b.WriteString("):\n")
	}
	for _, t := range tools {
		server := "server " + t.Upstream + aboutServer(truncateUTF8(t.Server, maxSignatureServer))
		if full {
			server = "server " + t.Upstream + aboutServer(t.Server)
		}
		if t.Unavailable != "" {
			server += ", " + t.Unavailable + " now"
		}
		if full {
			fmt.Fprintf(&b, "\n- %s (%s, score %.2f): %s\n  input schema: %s\n", t.Name, server, t.Score,
				oneLine(t.Description), compactJSON(t.InputSchema))
		} else {
			fmt.Fprintf(&b, "- %s: %s (%s, score %.2f)\n", t.Signature, firstSentence(t.Description), server, t.Score)
		}
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

// alternatives describes the catalog tools named, skipping any gone since.
func (s *Server) alternatives(names []string) []alternative {
	var out []alternative
	for _, n := range names {
		if t, ok := s.hub.Catalog().Tool(n); ok {
			out = append(out, alternative{Name: n, Upstream: t.Upstream, Server: t.Server})
		}
	}
	return out
}

// aboutServer is ": <description>" for a server with one, or "".
func aboutServer(desc string) string {
	if desc == "" {
		return ""
	}
	return ": " + oneLine(desc)
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func round2(f float64) float64 { return float64(int(f*100+0.5)) / 100 }

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func compactJSON(raw json.RawMessage) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func alertKinds(alerts []routing.Alert) []string {
	out := make([]string, len(alerts))
	for i, a := range alerts {
		out[i] = a.Kind
	}
	return out
}
